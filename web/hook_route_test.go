package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
	"github.com/labstack/echo/v4"
)

// noDecision checks a hook answer that decides nothing: 200 with PreToolUse
// "ask" (want "ask") or 204 with no body (want "none").
func noDecision(t *testing.T, name string, res hookResult, want string) {
	t.Helper()
	if want == "none" {
		if res.status != http.StatusNoContent || len(res.body) != 0 {
			t.Errorf("%s: %d %q, want 204 and no body", name, res.status, res.body)
		}
		return
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName      string `json:"hookEventName"`
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil ||
		out.HookSpecificOutput.HookEventName != hookanswer.EventPreToolUse || out.HookSpecificOutput.PermissionDecision != "ask" {
		t.Errorf("%s: %d %s, want 200 with PreToolUse ask", name, res.status, res.body)
	}
}

// nothingFiled fails when any request exists.
func (e *hookEnv) nothingFiled(t *testing.T) {
	t.Helper()
	status, body := e.Do(http.MethodGet, "/v1/requests?status=all", e.op, nil)
	if status != http.StatusOK || strings.Contains(string(body), `"id"`) {
		t.Fatalf("a hook call that was not taken filed something: %d %s", status, body)
	}
}

// bigHookInput is a recorded hook input whose command makes it size bytes
// or more.
func bigHookInput(t *testing.T, event string, size int) []byte {
	t.Helper()
	return hookInput(t, event, "echo "+strings.Repeat("a", size))
}

// Claude Code reads any status but 2xx from an http hook as a non-blocking
// error and goes on with its own settings, which may allow the call: every
// outcome of a hook route that is not a decision is the hook's own "no
// decision" with a 2xx.
func TestHookFallback(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("the corpus of bad inputs", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			files, err := filepath.Glob(filepath.Join("testdata", "hook-fallback", "*.json"))
			if err != nil || len(files) == 0 {
				t.Fatalf("corpus: %v %v", files, err)
			}
			for _, f := range files {
				body, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Base(f)
				want, _, _ := strings.Cut(name, "-")
				noDecision(t, name, testkit.Recv(t, e.hook("?timeout=60", e.agent, body), "the hook answer"), want)
			}
			e.nothingFiled(t)
		})

		// The agent chooses the size of its tool input.
		t.Run("an input over the body limit", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			for _, c := range []struct {
				name, event, want string
				size              int
			}{
				{"PreToolUse of 66 KB", hookanswer.EventPreToolUse, "ask", 66 << 10},
				{"PreToolUse of 2 MB", hookanswer.EventPreToolUse, "ask", 2 << 20},
				{"PermissionRequest of 66 KB", hookanswer.EventPermissionRequest, "none", 66 << 10},
			} {
				res := testkit.Recv(t, e.hook("?timeout=60", e.agent, bigHookInput(t, c.event, c.size)), "the hook answer")
				noDecision(t, c.name, res, c.want)
				if c.want == "ask" && !strings.Contains(string(res.body), "larger than Gatehouse takes") {
					t.Errorf("%s: %s, want the reason", c.name, res.body)
				}
			}
			e.nothingFiled(t)
		})

		t.Run("refused calls", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			raw := hookInput(t, hookanswer.EventPreToolUse, "git push origin main")
			pr := hookInput(t, hookanswer.EventPermissionRequest, "git push origin main")
			for _, c := range []struct {
				name, query, token string
				body               []byte
				want               string
			}{
				{"no token", "", "", raw, "ask"},
				{"an unknown token", "", "gh_nope", raw, "ask"},
				{"an operator token", "", e.op, raw, "ask"},
				{"no token, PermissionRequest", "", "", pr, "none"},
				{"no token, an input over the limit", "", "", bigHookInput(t, hookanswer.EventPreToolUse, 66<<10), "ask"},
				{"no token, not a hook's input", "", "", []byte(`{"hook_event_name":`), "ask"},
				{"a timeout out of range", "?timeout=601", e.agent, raw, "ask"},
				{"a timeout that is not a number", "?timeout=abc", e.agent, pr, "none"},
			} {
				noDecision(t, c.name, testkit.Recv(t, e.hook(c.query, c.token, c.body), "the hook answer"), c.want)
			}
			e.nothingFiled(t)
		})

		t.Run("a content type that is not JSON is still read as the hook input", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
				status, body := e.DoHeader(http.MethodPost, "/v1/hooks/claude-code", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git status"), "Content-Type", ct)
				if d, _ := decisionOf(t, hookResult{status, body}); d != "allow" {
					t.Errorf("content type %q: %d %s, want the rule's allow", ct, status, body)
				}
			}
		})

		t.Run("a filing over the rate", func(t *testing.T) {
			st, changes := storetest.Store(t, dialect)
			env := webtest.NewOn(t, st, changes, web.Config{FilingRate: 0.001, FilingBurst: 1})
			e := &hookEnv{Env: env, agent: env.Token(models.RoleAgent, "claude"), op: env.Token(models.RoleOperator, "alice")}
			noDecision(t, "the first filing", testkit.Recv(t, e.hook("?timeout=1", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git push")), "the hook answer"), "ask")
			res := testkit.Recv(t, e.hook("?timeout=60", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git push --force")), "the hook answer")
			noDecision(t, "over the rate", res, "ask")
			if !strings.Contains(string(res.body), "filing_too_fast") {
				t.Errorf("over the rate: %s, want the reason", res.body)
			}
		})

		t.Run("a wait over the waiter cap", func(t *testing.T) {
			st, changes := storetest.Store(t, dialect)
			started := make(chan struct{}, 4)
			env := webtest.NewOn(t, st, changes, web.Config{MaxWaitersPerCaller: 1, OnWaitStart: func() { started <- struct{}{} }})
			e := &hookEnv{Env: env, agent: env.Token(models.RoleAgent, "claude"), op: env.Token(models.RoleOperator, "alice"), started: started}
			first := e.hook("?timeout=60", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git push"))
			testkit.Recv(t, started, "the first wait to start")
			noDecision(t, "over the cap", testkit.Recv(t, e.hook("?timeout=60", e.agent, hookInput(t, hookanswer.EventPermissionRequest, "git push --force")), "the hook answer"), "none")
			id, version := e.openRequest(t)
			e.decide(t, id, version, "deny")
			if d, _ := decisionOf(t, testkit.Recv(t, first, "the first call")); d != "deny" {
				t.Fatalf("the first call: %s, want deny", d)
			}
		})
	})
}

// A body that stops arriving is cut by the server's body deadline; the
// hook still gets its "no decision".
func TestHookFallbackSlowBody(t *testing.T) {
	st, changes := storetest.Store(t, "sqlite")
	env := webtest.NewApp(t, app.Config{Store: st, Changes: changes, Conn: app.ConnConfig{BodyTimeout: 200 * time.Millisecond}})
	agent := env.Token(models.RoleAgent, "claude")
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, env.URL+"/v1/hooks/claude-code", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+agent)
	req.ContentLength = 4096
	done := make(chan hookResult, 1)
	go func() {
		resp, err := env.HTTP.Do(req)
		if err != nil {
			done <- hookResult{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- hookResult{resp.StatusCode, b}
	}()
	if _, err := pw.Write([]byte(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm`)); err != nil {
		t.Fatal(err)
	}
	noDecision(t, "a body that stops", testkit.Recv(t, done, "the answer after the body deadline"), "ask")
}

// Whatever a hook route's own code does that is not a 2xx — a panic, an
// internal error, an error status written directly — is the hook's "no
// decision"; and no route under /v1/hooks/ can be added around the wrapper.
func TestHookFallbackRoutes(t *testing.T) {
	e := webtest.New(t, "sqlite", web.Config{})
	web.AddHookRoute(e.Server, "/v1/hooks/test-panic", func(echo.Context) error { panic("boom") })
	web.AddHookRoute(e.Server, "/v1/hooks/test-internal", func(echo.Context) error { return errors.New("disk on fire") })
	web.AddHookRoute(e.Server, "/v1/hooks/test-503", func(c echo.Context) error {
		c.Response().Header().Set("Retry-After", "5")
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"error": "unavailable"})
	})
	pre := hookInput(t, hookanswer.EventPreToolUse, "git push")
	for _, path := range []string{"/v1/hooks/test-panic", "/v1/hooks/test-internal", "/v1/hooks/test-503", "/v1/hooks/no-such-hook"} {
		status, body := e.Do(http.MethodPost, path, "", pre)
		noDecision(t, path, hookResult{status, body}, "ask")
		if bytes.Contains(body, []byte("disk on fire")) || bytes.Contains(body, []byte("boom")) {
			t.Errorf("%s: an internal error shows: %s", path, body)
		}
	}
	status, body := e.Do(http.MethodPost, "/v1/hooks/test-503", "", hookInput(t, hookanswer.EventPermissionRequest, "git push"))
	noDecision(t, "an error status on PermissionRequest", hookResult{status, body}, "none")

	if err := web.CheckHookRoutes(e.Server); err != nil {
		t.Fatalf("hook routes added through hookRoute: %v", err)
	}
	e.Server.Echo().POST("/v1/hooks/around", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	if err := web.CheckHookRoutes(e.Server); err == nil {
		t.Fatal("a route under /v1/hooks/ added around hookRoute passed the check")
	}
}
