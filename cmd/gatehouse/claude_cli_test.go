package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// cliGuard bounds one run of the real CLI: a deadline for a hang, not a
// speed assertion.
const cliGuard = 3 * time.Minute

// claudeEnvVar names the Claude Code binary the real-CLI tests run (.ci/run
// installs it from npm: @anthropic-ai/claude-code, pinned).
const claudeEnvVar = "GATEHOUSE_TEST_CLAUDE"

// claudeCLI is one real Claude Code, pointed at a mock model and at a
// Gatehouse through `gatehouse hook claude-code`.
type claudeCLI struct {
	bin, gatehouse string
}

func realClaude(t *testing.T) claudeCLI {
	t.Helper()
	bin := os.Getenv(claudeEnvVar)
	if bin == "" {
		testkit.Skipf(t, "%s is not set: no Claude Code CLI to run (npm install @anthropic-ai/claude-code@2.1.328, then %s=.../node_modules/.bin/claude)", claudeEnvVar, claudeEnvVar)
	}
	if _, err := os.Stat(bin); err != nil {
		testkit.Skipf(t, "%s=%s: %v", claudeEnvVar, bin, err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	t.Logf("Claude Code CLI: %s (%s)", strings.TrimSpace(string(out)), bin)
	return claudeCLI{bin: bin, gatehouse: gatehousetest.Build(t)}
}

// trap is an HTTP proxy on 127.0.0.1 that forwards nothing: the CLI's
// HTTPS_PROXY and HTTP_PROXY point here, so anything it tried to send past
// the mock would be caught and named instead of reaching the internet.
type trap struct {
	mu    sync.Mutex
	hosts []string
}

func newTrap(t *testing.T) (*trap, string) {
	tr := &trap{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		tr.hosts = append(tr.hosts, r.Method+" "+r.Host)
		tr.mu.Unlock()
		http.Error(w, "no internet in tests", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	return tr, srv.URL
}

func (tr *trap) caught() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.hosts...)
}

// run is one `claude -p` in a fresh HOME and project directory.
type run struct {
	project        string
	stdout, stderr string
	err            error
}

// env is the CLI's whole environment: nothing of the developer's own (no API
// key, no config, no proxy) leaks in. Each setting keeps it offline:
//   - ANTHROPIC_BASE_URL: the model is the mock on 127.0.0.1; ANTHROPIC_API_KEY
//     is a dummy the mock ignores (in -p mode a key is used without asking).
//   - CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: no auto-update, release notes,
//     model capability look-ups, telemetry or error reports; DISABLE_AUTOUPDATER,
//     DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING and DISABLE_BUG_COMMAND say
//     each of those again, in case a version reads only the narrower switch.
//   - HTTPS_PROXY / HTTP_PROXY: the trap, so a request to anywhere but
//     127.0.0.1 (NO_PROXY) is caught and fails the test.
//   - HOME: a temporary directory holding the settings with the hook.
func (c claudeCLI) env(home, model, gatehouseURL, token, proxy string) []string {
	return []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir(), "TERM=dumb", "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + model, "ANTHROPIC_API_KEY=sk-ant-gatehouse-test-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1",
		"HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "NO_PROXY=127.0.0.1,localhost",
		"GATEHOUSE_URL=" + gatehouseURL, "GATEHOUSE_TOKEN=" + token,
	}
}

// settings is the hook configuration docs/agents.md gives (its first json
// block in the Claude Code section), with `gatehouse` the binary just built:
// the documented snippet is what the real CLI runs.
func (c claudeCLI) settings(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "### Claude Code")
	_, block, ok := strings.Cut(section, "```json\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 || !json.Valid([]byte(block)) {
		t.Fatalf("docs/agents.md: no valid json settings block in the Claude Code section")
	}
	bin, _ := json.Marshal(c.gatehouse)
	cmd := `"gatehouse hook claude-code`
	if !strings.Contains(block, cmd) {
		t.Fatalf("docs/agents.md settings do not run %s: %s", cmd, block)
	}
	return strings.Replace(block, cmd, `"`+strings.Trim(string(bin), `"`)+` hook claude-code`, 1)
}

// run starts `claude -p` in its own process group and waits for it. Once it
// has exited, no process of that group may be left: the hook and the Bash
// tool's shells all ended with it.
func (c claudeCLI) run(t *testing.T, model *modelmock.Anthropic, gatehouseURL, token string) run {
	t.Helper()
	return c.runSettings(t, c.settings(t), model, gatehouseURL, token)
}

// runSettings is run with the given ~/.claude/settings.json.
func (c claudeCLI) runSettings(t *testing.T, settings string, model *modelmock.Anthropic, gatehouseURL, token string) run {
	t.Helper()
	tr, proxy := newTrap(t)
	home, project := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "-p", "Run the command.", "--max-turns", "6")
	cmd.Dir = project
	cmd.Env = c.env(home, model.URL, gatehouseURL, token, proxy)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("claude -p did not finish within %s; model calls: %s\nstderr: %s", cliGuard, model.Seen(), stderr.String())
	}
	if left := syscall.Kill(-cmd.Process.Pid, 0); !errors.Is(left, syscall.ESRCH) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Errorf("processes of claude's group were left running after it exited (kill -0: %v)", left)
	}
	if caught := tr.caught(); len(caught) > 0 {
		t.Errorf("the CLI tried to reach past the mock: %v", caught)
	}
	t.Logf("model calls: %s", model.Seen())
	return run{project: project, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// gatehouse is the in-process server the hook talks to.
type gatehouse struct {
	env           *webtest.Env
	agent         string
	operatorToken string
	operator      *client.Client
}

func newGatehouse(t *testing.T) *gatehouse {
	e := webtest.New(t, "sqlite", web.Config{})
	op := e.Token(models.RoleOperator, "alice")
	return &gatehouse{env: e, agent: e.Token(models.RoleAgent, "claude"), operatorToken: op, operator: client.New(e.URL, op)}
}

// decideEach decides every request filed while the CLI runs, in order, with
// the options given (id and note); it returns the records as decided.
func (g *gatehouse) decideEach(t *testing.T, decisions ...[2]string) <-chan []*api.Request {
	sub := g.env.Changes.Subscribe(64)
	done := make(chan []*api.Request, 1)
	go func() {
		defer sub.Close()
		var out []*api.Request
		for _, d := range decisions {
			for ch := range sub.C {
				if ch.Action != "create" {
					continue
				}
				r, err := g.operator.Decide(context.Background(), ch.RequestID, ch.Version, d[0], d[1])
				if err != nil {
					t.Errorf("decide %s %s: %v", ch.RequestID, d[0], err)
				}
				out = append(out, r)
				break
			}
		}
		done <- out
	}()
	return done
}

// settled checks nothing is left open in Gatehouse.
func (g *gatehouse) settled(t *testing.T) {
	t.Helper()
	n, err := g.env.Store.CountOpen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d requests still open after the CLI exited", n)
	}
}

func (r run) check(t *testing.T) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
}

// tell is what the model was told about each command, in order.
func tell(t *testing.T, model *modelmock.Anthropic, n int) []modelmock.ToolResult {
	t.Helper()
	got := model.FinalResults()
	if len(got) != n {
		t.Fatalf("the model saw %d tool results, want %d: %+v (calls: %s)", len(got), n, got, model.Seen())
	}
	return got
}

// created reports whether the command made its repository in the project.
func created(project, dir string) bool {
	_, err := os.Stat(filepath.Join(project, dir, ".git"))
	return err == nil
}

// filed is how many requests the hook filed, whatever became of them.
func (g *gatehouse) filed(t *testing.T) int {
	t.Helper()
	status, body := g.env.Do(http.MethodGet, "/v1/requests?status=all", g.operatorToken, nil)
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, body)
	}
	var list struct {
		Requests []json.RawMessage `json:"requests"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("list: %v: %s", err, body)
	}
	return len(list.Requests)
}

// TestRealClaudeCode runs the real Claude Code CLI (`claude -p`) against a
// mock model that asks for `git init DIR` (a command Claude Code asks about
// and suggests a rule for, `Bash(git init *)`), with its PermissionRequest
// hook running the built `gatehouse hook claude-code` against a Gatehouse.
func TestRealClaudeCode(t *testing.T) {
	cli := realClaude(t)
	t.Run("an operator's allow lets the command run", func(t *testing.T) {
		g := newGatehouse(t)
		model := modelmock.NewAnthropic(t, "git init gh-allow")
		decided := g.decideEach(t, [2]string{"once", ""})
		res := cli.run(t, model, g.env.URL, g.agent)
		res.check(t)
		got := tell(t, model, 1)
		if got[0].IsError || !strings.Contains(got[0].Content, "Initialized empty Git repository") || !created(res.project, "gh-allow") {
			t.Fatalf("the model was told %+v; the command must have run", got[0])
		}
		r := awaitDecided(t, decided)[0]
		if r.Title != "Run: git init gh-allow" || r.Options[1].Label != "Allow for this session (allows Bash(git init *) until the session ends)" {
			t.Fatalf("filed %q with options %+v", r.Title, r.Options)
		}
		g.settled(t)
	})
	t.Run("a deny with a note reaches the model as the tool result", func(t *testing.T) {
		g := newGatehouse(t)
		model := modelmock.NewAnthropic(t, "git init gh-deny")
		decided := g.decideEach(t, [2]string{"deny", "not in this repo; use the scratch dir"})
		res := cli.run(t, model, g.env.URL, g.agent)
		res.check(t)
		awaitDecided(t, decided)
		got := tell(t, model, 1)
		if !got[0].IsError || got[0].Content != "not in this repo; use the scratch dir" || created(res.project, "gh-deny") {
			t.Fatalf("the model was told %+v; want the note as an error result and no repository", got[0])
		}
		g.settled(t)
	})
	t.Run("a server that is down falls back to the CLI's own prompt, a denial in -p", func(t *testing.T) {
		down := httptest.NewServer(nil)
		down.Close()
		model := modelmock.NewAnthropic(t, "git init gh-down")
		res := cli.run(t, model, down.URL, "gh_unused")
		res.check(t)
		got := tell(t, model, 1)
		if !got[0].IsError || created(res.project, "gh-down") {
			t.Fatalf("the model was told %+v; with no Gatehouse the command must not run", got[0])
		}
		t.Logf("with Gatehouse down the model was told: %s", got[0].Content)
	})
	t.Run("allow for this session covers the same rule's next call without asking", func(t *testing.T) {
		g := newGatehouse(t)
		model := modelmock.NewAnthropic(t, "git init gh-one", "git init gh-two")
		decided := g.decideEach(t, [2]string{"session", ""})
		res := cli.run(t, model, g.env.URL, g.agent)
		res.check(t)
		awaitDecided(t, decided)
		got := tell(t, model, 2)
		for i, dir := range []string{"gh-one", "gh-two"} {
			if got[i].IsError || !created(res.project, dir) {
				t.Fatalf("call %d: the model was told %+v; both calls must have run", i+1, got[i])
			}
		}
		if n := g.filed(t); n != 1 {
			t.Fatalf("%d requests filed; the session rule should have answered the second call", n)
		}
		if _, err := os.Stat(filepath.Join(res.project, ".claude", "settings.local.json")); err == nil {
			t.Fatal("a session allow saved a rule in the project's settings")
		}
		g.settled(t)
	})
	t.Run("allow for project saves exactly the rule the option showed", func(t *testing.T) {
		g := newGatehouse(t)
		model := modelmock.NewAnthropic(t, "git init gh-project")
		decided := g.decideEach(t, [2]string{"project", ""})
		res := cli.run(t, model, g.env.URL, g.agent)
		res.check(t)
		r := awaitDecided(t, decided)[0]
		if got := tell(t, model, 1); got[0].IsError {
			t.Fatalf("the model was told %+v", got[0])
		}
		b, err := os.ReadFile(filepath.Join(res.project, ".claude", "settings.local.json"))
		if err != nil {
			t.Fatalf("no project rule saved: %v", err)
		}
		var saved struct {
			Permissions struct {
				Allow []string `json:"allow"`
			} `json:"permissions"`
		}
		if err := json.Unmarshal(b, &saved); err != nil {
			t.Fatalf("settings.local.json: %v: %s", err, b)
		}
		if len(saved.Permissions.Allow) != 1 || saved.Permissions.Allow[0] != "Bash(git init *)" ||
			r.Options[2].Label != "Allow for project (saves Bash(git init *) to .claude/settings.local.json)" {
			t.Fatalf("saved %v; the option said %q", saved.Permissions.Allow, r.Options[2].Label)
		}
		g.settled(t)
	})
}

// awaitDecided returns the decided records once every expected request was
// filed and decided.
func awaitDecided(t *testing.T, decided <-chan []*api.Request) []*api.Request {
	t.Helper()
	select {
	case rs := <-decided:
		return rs
	case <-time.After(cliGuard):
		t.Fatal("the hook filed fewer requests than the test decides")
		return nil
	}
}
