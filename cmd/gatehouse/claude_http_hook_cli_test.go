package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
)

// httpHookSettings is the "type": "http" hook docs/agents.md gives (the json
// block of "Claude Code over HTTP"), moved to event and pointed at hookURL
// with the hook's own timeout in seconds: the documented snippet, headers and
// allowedEnvVars included, is what the real CLI runs.
func httpHookSettings(t *testing.T, event, hookURL string, timeout int) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "### Claude Code over HTTP")
	_, block, ok := strings.Cut(section, "```json\n")
	block, _, ok2 := strings.Cut(block, "```")
	var doc2 struct {
		Hooks map[string][]struct {
			Matcher string           `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if !ok || !ok2 || json.Unmarshal([]byte(block), &doc2) != nil {
		t.Fatalf("docs/agents.md: no valid json settings block in the Claude Code over HTTP section")
	}
	groups := doc2.Hooks["PermissionRequest"]
	if len(groups) != 1 || len(groups[0].Hooks) != 1 {
		t.Fatalf("docs/agents.md: want one PermissionRequest hook in the http block: %s", block)
	}
	h := groups[0].Hooks[0]
	headers, _ := h["headers"].(map[string]any)
	envs, _ := h["allowedEnvVars"].([]any)
	if h["type"] != "http" || headers["Authorization"] != "Bearer $GATEHOUSE_TOKEN" || len(envs) != 1 || envs[0] != "GATEHOUSE_TOKEN" {
		t.Fatalf("docs/agents.md: the http hook is not the bearer-token one the test expects: %s", block)
	}
	h["url"], h["timeout"] = hookURL, timeout
	out, err := json.Marshal(map[string]any{"hooks": map[string]any{
		event: []any{map[string]any{"matcher": groups[0].Matcher, "hooks": []any{h}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// hookCall is one exchange of the CLI's http hook with Gatehouse.
type hookCall struct {
	Status int
	Body   string
}

// hookTap is a reverse proxy in front of Gatehouse that records what each
// hook call was answered, so a test knows the CLI called the hook and what it
// was told, not only what it did next.
type hookTap struct {
	mu    sync.Mutex
	calls []hookCall
}

func newHookTap(t *testing.T, target string) (*hookTap, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tap := &hookTap{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(res *http.Response) error {
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		tap.mu.Lock()
		tap.calls = append(tap.calls, hookCall{res.StatusCode, strings.TrimSpace(string(b))})
		tap.mu.Unlock()
		return err
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return tap, srv.URL
}

// one is the single hook call of a run: the CLI asks once per tool call.
func (tap *hookTap) one(t *testing.T) hookCall {
	t.Helper()
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if len(tap.calls) != 1 {
		t.Fatalf("the hook called Gatehouse %d times, want 1: %+v", len(tap.calls), tap.calls)
	}
	t.Logf("Gatehouse answered the hook %d %s", tap.calls[0].Status, tap.calls[0].Body)
	return tap.calls[0]
}

// firstFiled yields the id of the first request filed from now on.
func (g *gatehouse) firstFiled() <-chan string {
	sub := g.env.Changes.Subscribe(64)
	id := make(chan string, 1)
	go func() {
		defer sub.Close()
		for ch := range sub.C {
			if ch.Action == "create" {
				id <- ch.RequestID
				return
			}
		}
	}()
	return id
}

// status is the request's status as the operator reads it.
func (g *gatehouse) status(t *testing.T, id string) string {
	t.Helper()
	r, err := g.operator.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return r.Status
}

// refused checks a command was not run and the model was told so.
func refused(t *testing.T, model *modelmock.Anthropic, res run, dir string) modelmock.ToolResult {
	t.Helper()
	got := tell(t, model, 1)
	if !got[0].IsError || created(res.project, dir) {
		t.Fatalf("the model was told %+v; the command must not have run", got[0])
	}
	t.Logf("the model was told: %s", got[0].Content)
	if res.stderr != "" {
		t.Logf("claude's stderr: %s", res.stderr)
	}
	return got[0]
}

// TestRealClaudeCodeHTTPHook runs the real `claude -p` with its hook of
// "type": "http" posting to Gatehouse's /v1/hooks/claude-code, for both
// events Gatehouse answers, against the mock model asking for `git init DIR`.
// No run may end in a command that ran without an operator's allow.
func TestRealClaudeCodeHTTPHook(t *testing.T) {
	cli := realClaude(t)
	for _, event := range []string{"PreToolUse", "PermissionRequest"} {
		t.Run(event, func(t *testing.T) {
			// settings is the hook against a Gatehouse at base, with the
			// server's ?timeout= and the hook's own, longer, timeout.
			settings := func(base string, wait, timeout int) string {
				return httpHookSettings(t, event, fmt.Sprintf("%s/v1/hooks/claude-code?timeout=%d", base, wait), timeout)
			}
			t.Run("an operator's allow lets the command run", func(t *testing.T) {
				g := newGatehouse(t)
				tap, base := newHookTap(t, g.env.URL)
				model := modelmock.NewAnthropic(t, "git init gh-http-allow")
				decided := g.decideEach(t, [2]string{"once", ""})
				res := cli.runSettings(t, settings(base, 60, 90), model, g.env.URL, g.agent)
				res.check(t)
				r := awaitDecided(t, decided)[0]
				got := tell(t, model, 1)
				if got[0].IsError || !strings.Contains(got[0].Content, "Initialized empty Git repository") || !created(res.project, "gh-http-allow") {
					t.Fatalf("the model was told %+v; the command must have run", got[0])
				}
				if r.Title != "Run: git init gh-http-allow" {
					t.Fatalf("filed %q", r.Title)
				}
				if call := tap.one(t); call.Status != http.StatusOK || !strings.Contains(call.Body, `"allow"`) {
					t.Fatalf("Gatehouse answered %+v, want 200 with an allow", call)
				}
				if s := g.status(t, r.ID); s != models.StatusResolved {
					t.Fatalf("the request is %s, want resolved", s)
				}
				g.settled(t)
			})
			t.Run("an operator's deny keeps the command from running", func(t *testing.T) {
				g := newGatehouse(t)
				tap, base := newHookTap(t, g.env.URL)
				model := modelmock.NewAnthropic(t, "git init gh-http-deny")
				decided := g.decideEach(t, [2]string{"deny", "not in this repo; use the scratch dir"})
				res := cli.runSettings(t, settings(base, 60, 90), model, g.env.URL, g.agent)
				res.check(t)
				r := awaitDecided(t, decided)[0]
				if got := refused(t, model, res, "gh-http-deny"); !strings.Contains(got.Content, "not in this repo; use the scratch dir") {
					t.Fatalf("the model was told %q; want the operator's note", got.Content)
				}
				if call := tap.one(t); call.Status != http.StatusOK || !strings.Contains(call.Body, `"deny"`) {
					t.Fatalf("Gatehouse answered %+v, want 200 with a deny", call)
				}
				if s := g.status(t, r.ID); s != models.StatusResolved {
					t.Fatalf("the request is %s, want resolved", s)
				}
				g.settled(t)
			})
			t.Run("a refused token is answered as no decision, never an error the CLI skips", func(t *testing.T) {
				g := newGatehouse(t)
				tap, base := newHookTap(t, g.env.URL)
				model := modelmock.NewAnthropic(t, "git init gh-http-401")
				res := cli.runSettings(t, settings(base, 60, 90), model, g.env.URL, "gh_not_a_token")
				res.check(t)
				refused(t, model, res, "gh-http-401")
				call := tap.one(t)
				switch {
				case event == "PreToolUse" && (call.Status != http.StatusOK || !strings.Contains(call.Body, `"permissionDecision":"ask"`)):
					t.Fatalf("Gatehouse answered %+v, want 200 with ask", call)
				case event == "PermissionRequest" && call.Status != http.StatusNoContent:
					t.Fatalf("Gatehouse answered %+v, want 204", call)
				}
				if n := g.filed(t); n != 0 {
					t.Fatalf("%d requests filed with a refused token", n)
				}
			})
			t.Run("no decision within the timeout is ask, a denial in -p, and the request is cancelled", func(t *testing.T) {
				g := newGatehouse(t)
				tap, base := newHookTap(t, g.env.URL)
				model := modelmock.NewAnthropic(t, "git init gh-http-timeout")
				filed := g.firstFiled()
				res := cli.runSettings(t, settings(base, 1, 30), model, g.env.URL, g.agent)
				res.check(t)
				id := testkit.Recv(t, filed, "the hook's request")
				refused(t, model, res, "gh-http-timeout")
				call := tap.one(t)
				switch {
				case event == "PreToolUse" && (call.Status != http.StatusOK || !strings.Contains(call.Body, `"permissionDecision":"ask"`)):
					t.Fatalf("Gatehouse answered %+v, want 200 with ask", call)
				case event == "PermissionRequest" && (call.Status != http.StatusNoContent || call.Body != ""):
					t.Fatalf("Gatehouse answered %+v, want 204", call)
				}
				if s := g.status(t, id); s != models.StatusCancelled {
					t.Fatalf("the request is %s, want cancelled", s)
				}
				g.settled(t)
			})
			t.Run("an unreachable server leaves the command not run", func(t *testing.T) {
				down := httptest.NewServer(nil)
				down.Close()
				model := modelmock.NewAnthropic(t, "git init gh-http-down")
				res := cli.runSettings(t, settings(down.URL, 60, 90), model, down.URL, "gh_unused")
				res.check(t)
				refused(t, model, res, "gh-http-down")
			})
			if event != "PreToolUse" {
				return // PermissionRequest never fires for a call the settings allow
			}
			// An error status is non-blocking for Claude Code: it goes on with
			// its own settings. So a refused token is answered "ask" (which
			// overrides an allow rule of the settings); a server that is down
			// cannot answer at all, and the settings' own rule then applies.
			t.Run("a refused token asks even for a call the CLI's own settings allow", func(t *testing.T) {
				g := newGatehouse(t)
				tap, base := newHookTap(t, g.env.URL)
				model := modelmock.NewAnthropic(t, "git init gh-http-401-allowed")
				res := cli.runSettings(t, allowing(t, settings(base, 60, 90), "Bash(git init *)"), model, base, "gh_not_a_token")
				res.check(t)
				refused(t, model, res, "gh-http-401-allowed")
				if call := tap.one(t); call.Status != http.StatusOK || !strings.Contains(call.Body, `"ask"`) {
					t.Fatalf("Gatehouse answered %+v, want 200 with ask", call)
				}
				if n := g.filed(t); n != 0 {
					t.Fatalf("%d requests filed with a refused token", n)
				}
			})
			// The agent chooses its tool input's size (here by a long
			// description): one over the body limit is answered "ask" as
			// well, not 413, which the CLI would read as "go on" and let its
			// own allow rule run the call.
			t.Run("an input over the body limit asks even for a call the CLI's own settings allow", func(t *testing.T) {
				g := newGatehouse(t)
				tap, base := newHookTap(t, g.env.URL)
				model := modelmock.StartAnthropic(t, modelmock.AnthropicConfig{Commands: []string{"git init gh-http-big"}, Description: strings.Repeat("a", 66<<10)})
				res := cli.runSettings(t, allowing(t, settings(base, 60, 90), "Bash(git init *)"), model, base, g.agent)
				res.check(t)
				refused(t, model, res, "gh-http-big")
				if call := tap.one(t); call.Status != http.StatusOK || !strings.Contains(call.Body, `"ask"`) {
					t.Fatalf("Gatehouse answered %d %.200s, want 200 with ask", call.Status, call.Body)
				}
				if n := g.filed(t); n != 0 {
					t.Fatalf("%d requests filed for an input over the limit", n)
				}
			})
			t.Run("a server that is down leaves a call the CLI's own settings allow to those settings", func(t *testing.T) {
				down := httptest.NewServer(nil)
				down.Close()
				model := modelmock.NewAnthropic(t, "git init gh-http-down-allowed")
				res := cli.runSettings(t, allowing(t, settings(down.URL, 60, 90), "Bash(git init *)"), model, down.URL, "gh_unused")
				res.check(t)
				if got := tell(t, model, 1); got[0].IsError || !created(res.project, "gh-http-down-allowed") {
					t.Fatalf("the model was told %+v; the settings' own rule should have let it run", got[0])
				}
			})
		})
	}
}

// allowing adds an allow rule of Claude Code's own to settings.
func allowing(t *testing.T, settings, rule string) string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		t.Fatal(err)
	}
	s["permissions"] = map[string]any{"allow": []string{rule}}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
