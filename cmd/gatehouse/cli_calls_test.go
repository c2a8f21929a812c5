//go:build !agent

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestFailedCallsPrintNoToken runs every command that calls the server with
// the sentinel as its token, against a server that refuses it (401) and
// against none: each fails, naming itself once, and never prints the token.
func TestFailedCallsPrintNoToken(t *testing.T) {
	secretEnv(t)
	e := webtest.New(t, "sqlite", web.Config{})
	hookInput := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	calls := []struct {
		args  []string
		stdin string
		code  int // the exit code of a failed call; the hooks answer 0 and let the agent ask
	}{
		{args: []string{"ask", "--title", "deploy", "--timeout", "5s"}, code: exitError},
		{args: []string{"hook", "claude-code"}, stdin: hookInput("claude-code/pretooluse-bash.json")},
		{args: []string{"hook", "codex"}, stdin: hookInput("codex/permissionrequest-bash.json")},
		{args: []string{"runtime", "--name", "r"}, code: 1},
		{args: []string{"rules", "list"}, code: 1},
		{args: []string{"token", "list", "--url", "URL"}, code: 1},
		{args: []string{"token", "create", "--role", "agent", "--name", "a", "--url", "URL"}, code: 1},
		{args: []string{"token", "revoke", "a", "--url", "URL"}, code: 1},
		{args: []string{"session", "list", "--url", "URL"}, code: 1},
		{args: []string{"remembered", "list", "--url", "URL"}, code: 1},
		{args: []string{"away", "status"}, code: 1},
		{args: []string{"away", "on"}, code: 1},
		{args: []string{"chat", "link", "--url", "URL"}, code: 1},
		{args: []string{"audit", "export", "--url", "URL"}, code: 1},
		{args: []string{"audit", "verify", "--url", "URL"}, code: 1},
	}
	for _, server := range []struct{ name, url string }{{"refused with 401", e.URL}, {"unreachable", "http://127.0.0.1:1"}} {
		t.Run(server.name, func(t *testing.T) {
			t.Setenv("GATEHOUSE_URL", server.url)
			for _, c := range calls {
				args := make([]string, len(c.args))
				for i, a := range c.args {
					args[i] = strings.ReplaceAll(a, "URL", server.url)
				}
				t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
					var out, errOut bytes.Buffer
					code := run(t.Context(), args, strings.NewReader(c.stdin), &out, &errOut)
					got := invocation{args, code, out.String(), errOut.String()}
					noSecret(t, got)
					if code != c.code || !strings.HasPrefix(got.stderr, "gatehouse") {
						t.Fatalf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", args, code, c.code, got.stdout, got.stderr)
					}
					noDoubledPrefix(t, got)
				})
			}
		})
	}
}
