package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestAgentBuild checks the agent build (`CGO_ENABLED=0 go build -tags agent`): it links
// none of the server's packages (the reason it exists: the hook runs once per
// tool call, and every linked package's initialisation runs in every process),
// refuses the server's commands saying where they are, and its hook answers
// a rule-approved call as the full build's does.
func TestAgentBuild(t *testing.T) {
	const cmdPkg = "github.com/gatehousehq/gatehouse/cmd/gatehouse"
	t.Run("links no server package", func(t *testing.T) {
		out, err := exec.Command("go", "list", "-deps", "-tags", "agent", cmdPkg).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		server := []string{
			"gorm.io/", "modernc.org/", "github.com/jackc/", "github.com/labstack/", "github.com/prometheus/",
			"github.com/a-h/templ", "github.com/sideshow/apns2", "github.com/google/jsonschema-go",
			"github.com/gatehousehq/gatehouse/models", "github.com/gatehousehq/gatehouse/web",
			"github.com/gatehousehq/gatehouse/app", "github.com/gatehousehq/gatehouse/push",
			"github.com/gatehousehq/gatehouse/views", "github.com/gatehousehq/gatehouse/forward",
			"github.com/gatehousehq/gatehouse/api/openapi",
		}
		deps := strings.Fields(string(out))
		for _, p := range deps {
			for _, s := range server {
				if strings.HasPrefix(p, s) {
					t.Errorf("the agent build links %s", p)
				}
			}
		}
		if !strings.Contains(string(out), "github.com/gatehousehq/gatehouse/client\n") {
			t.Fatalf("go list printed no client package; is the list right?\n%s", out)
		}
	})

	t.Setenv("CGO_ENABLED", "0") // built as docs/agents.md says
	bin := gatehousetest.Build(t, "-tags", "agent")
	run := func(t *testing.T, stdin []byte, env []string, args ...string) (code int, stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testkit.CapWait)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = bytes.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}

	t.Run("server commands say where they are", func(t *testing.T) {
		for _, name := range []string{"serve", "token", "session", "rules", "push", "audit", "remembered", "away", "chat"} {
			t.Run(name, func(t *testing.T) {
				code, _, stderr := run(t, nil, nil, name)
				if code != 2 || !strings.Contains(stderr, `"`+name+`" is a server command, not in this agent build`) || !strings.Contains(stderr, "-tags agent") {
					t.Fatalf("exit %d, stderr %q; want 2 and where the command is", code, stderr)
				}
			})
		}
	})

	t.Run("usage lists its own commands", func(t *testing.T) {
		code, stdout, _ := run(t, nil, nil, "-h")
		if code != 0 || !strings.Contains(stdout, "gatehouse hook claude-code") || strings.Contains(stdout, "gatehouse serve") ||
			!strings.Contains(stdout, "agent build") {
			t.Fatalf("exit %d, usage:\n%s", code, stdout)
		}
	})

	t.Run("hook answers a rule-approved call", func(t *testing.T) {
		rules := filepath.Join(t.TempDir(), "rules.yaml")
		if err := os.WriteFile(rules, []byte("rules:\n  - name: pushes-ok\n    match:\n      tool: Bash\n      command: '^git push origin main$'\n    action: approve\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e := webtest.NewApp(t, app.Config{Database: "sqlite:" + filepath.Join(t.TempDir(), "g.db"), RulesFile: rules})
		token := e.Token(models.RoleAgent, "agent-build")
		input, err := os.ReadFile("testdata/claude-code/pretooluse-bash.json")
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(t, input, []string{"GATEHOUSE_URL=" + e.URL, "GATEHOUSE_TOKEN=" + token}, "hook", "claude-code")
		const want = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Allowed in Gatehouse by rule:pushes-ok"}}` + "\n"
		if code != 0 || stdout != want {
			t.Fatalf("exit %d, printed %q (stderr %q); want 0 and %q", code, stdout, stderr, want)
		}
	})
}
