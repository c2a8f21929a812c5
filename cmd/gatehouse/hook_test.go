package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"

	"github.com/gatehousehq/gatehouse/models/rules"
)

// The fixtures are hook inputs recorded from Claude Code (testdata/claude-code/README.md).
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/claude-code/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	preToolUse        = "pretooluse-bash.json"
	permissionRequest = "permissionrequest-bash.json"
)

func hookArgs(url, token, timeout string) []string {
	return []string{"hook", "claude-code", "--url", url, "--token", token, "--timeout", timeout}
}

// decidedHook runs the hook on a fixture, decides its request through the
// API, and returns what the hook printed.
func decidedHook(t *testing.T, ts *testServer, name, option, note string) (result, *api.Request) {
	t.Helper()
	ids := ts.created(t)
	done := start(hookArgs(ts.URL, ts.Agent, "1m"), fixture(t, name))
	id := testkit.Recv(t, ids, "the filed request id")
	ts.decide(t, id, option, note)
	res := testkit.Recv(t, done, "the command to end")
	r, err := ts.Operator.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return res, r
}

func checkOutput(t *testing.T, res result, want string) {
	t.Helper()
	if res.code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", res.code, res.stderr)
	}
	if res.stdout != want {
		t.Fatalf("stdout:\n got %s\nwant %s\nstderr: %s", res.stdout, want, res.stderr)
	}
}

func TestHookPreToolUse(t *testing.T) {
	t.Run("files the permission request Gatehouse writes", func(t *testing.T) {
		ts := newTestServer(t)
		_, r := decidedHook(t, ts, preToolUse, "once", "")
		if r.Kind != "permission" || r.Tool != "Bash" || r.Command != "git push origin main" {
			t.Fatalf("kind/tool/command = %q %q %q", r.Kind, r.Tool, r.Command)
		}
		if r.Title != "Run: git push origin main" {
			t.Fatalf("title = %q", r.Title)
		}
		if want := "{\n  \"command\": \"git push origin main\",\n  \"description\": \"push\"\n}"; r.Detail != want {
			t.Fatalf("detail = %q, want %q", r.Detail, want)
		}
		wantRef := map[string]string{
			"session": "702e15d7-315c-44b7-82f6-6688942c5ad6", "cwd": "/home/dev/project",
			"transcript_path": "/home/dev/.claude/projects/-home-dev-project/702e15d7-315c-44b7-82f6-6688942c5ad6.jsonl",
			"tool_use_id":     "toolu_01MockApiBashPush00000001",
		}
		if r.Source != "session" || !reflect.DeepEqual(r.SourceRef, wantRef) {
			t.Fatalf("source %q ref %v", r.Source, r.SourceRef)
		}
		wantOpts := []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
		if !reflect.DeepEqual(r.Options, wantOpts) {
			t.Fatalf("options = %v (no project suggestion in a PreToolUse input)", r.Options)
		}
	})
	t.Run("allow", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), preToolUse, "once", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Allowed in Gatehouse by operator:alice"}}`+"\n")
	})
	t.Run("deny", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), preToolUse, "deny", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied in Gatehouse by operator:alice"}}`+"\n")
	})
	t.Run("the operator's note is the reason", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), preToolUse, "deny", "push to a branch and open a PR instead")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"push to a branch and open a PR instead"}}`+"\n")
	})
	t.Run("server down asks", func(t *testing.T) {
		down := httptest.NewServer(nil)
		down.Close()
		res := testkit.Recv(t, start(hookArgs(down.URL, "whatever", "1m"), fixture(t, preToolUse)), "the command to end")
		checkAsk(t, res)
	})
	t.Run("wrong token asks and files nothing", func(t *testing.T) {
		ts := newTestServer(t)
		res := testkit.Recv(t, start(hookArgs(ts.URL, "gh_wrong", "1m"), fixture(t, preToolUse)), "the command to end")
		checkAsk(t, res)
		if n, _ := ts.Store.CountOpen(context.Background()); n != 0 {
			t.Fatalf("%d open requests after a refused token", n)
		}
	})
	t.Run("timeout asks and cancels the request", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		res := testkit.Recv(t, start(hookArgs(ts.URL, ts.Agent, "1s"), fixture(t, preToolUse)), "the command to end")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"No decision in Gatehouse within 1s; asking here instead"}}`+"\n")
		checkTimeoutWords(t, res)
		r, err := ts.Operator.Get(context.Background(), testkit.Recv(t, ids, "the filed request id"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != "cancelled" {
			t.Fatalf("status after the hook gave up = %q, want cancelled", r.Status)
		}
	})
}

// checkTimeoutWords: a hook that waited its --timeout out says so in words on
// stderr, not as Go's "context deadline exceeded".
func checkTimeoutWords(t *testing.T, res result) {
	t.Helper()
	const want = "gatehouse hook: no decision within 1s; asking in Claude Code instead\n"
	if res.stderr != want {
		t.Fatalf("stderr = %q, want %q", res.stderr, want)
	}
}

// checkAsk: an unreachable or refusing server is never an allow.
func checkAsk(t *testing.T, res result) {
	t.Helper()
	if res.code != 0 {
		t.Fatalf("exit %d; stderr %s", res.code, res.stderr)
	}
	var want = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"Gatehouse could not take the request (`
	if len(res.stdout) < len(want) || res.stdout[:len(want)] != want {
		t.Fatalf("stdout = %s, want an ask starting %s", res.stdout, want)
	}
}

func TestHookPermissionRequest(t *testing.T) {
	t.Run("offers the session and project scopes from the suggestion, each showing its rule", func(t *testing.T) {
		_, r := decidedHook(t, newTestServer(t), permissionRequest, "once", "")
		wantOpts := []api.Option{
			{ID: "once", Label: "Allow once", Effect: "allow"},
			{ID: "session", Label: "Allow for this session (allows Bash(git push *) until the session ends)", Effect: "allow"},
			{ID: "project", Label: "Allow for project (saves Bash(git push *) to .claude/settings.local.json)", Effect: "allow"},
			{ID: "deny", Label: "Deny", Effect: "deny"},
		}
		if !reflect.DeepEqual(r.Options, wantOpts) {
			t.Fatalf("options = %v", r.Options)
		}
		if r.Risk != nil {
			t.Fatalf("risk = %q: the hook judges no risk, so the request carries none", *r.Risk)
		}
		if _, ok := r.SourceRef["tool_use_id"]; ok {
			t.Fatalf("source_ref has a tool_use_id the input lacks: %v", r.SourceRef)
		}
	})
	t.Run("allow once", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), permissionRequest, "once", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`+"\n")
	})
	t.Run("allow for project hands back the project rule", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), permissionRequest, "project", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"}],"behavior":"allow","destination":"localSettings"}]}}}`+"\n")
	})
	t.Run("allow for this session hands back the same rule for the session", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), permissionRequest, "session", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"}],"behavior":"allow","destination":"session"}]}}}`+"\n")
	})
	t.Run("deny", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), permissionRequest, "deny", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Gatehouse by operator:alice"}}}`+"\n")
	})
	t.Run("the operator's note is the message", func(t *testing.T) {
		res, _ := decidedHook(t, newTestServer(t), permissionRequest, "deny", "not on main")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on main"}}}`+"\n")
	})
	t.Run("server down prints nothing", func(t *testing.T) {
		down := httptest.NewServer(nil)
		down.Close()
		res := testkit.Recv(t, start(hookArgs(down.URL, "whatever", "1m"), fixture(t, permissionRequest)), "the command to end")
		checkOutput(t, res, "")
	})
	t.Run("timeout prints nothing and cancels the request", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		res := testkit.Recv(t, start(hookArgs(ts.URL, ts.Agent, "1s"), fixture(t, permissionRequest)), "the command to end")
		checkOutput(t, res, "")
		checkTimeoutWords(t, res)
		r, err := ts.Operator.Get(context.Background(), testkit.Recv(t, ids, "the filed request id"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != "cancelled" {
			t.Fatalf("status = %q, want cancelled", r.Status)
		}
	})
	t.Run("the same command again in one prompt is asked again", func(t *testing.T) {
		ts := newTestServer(t)
		first, _ := decidedHook(t, ts, permissionRequest, "once", "")
		checkOutput(t, first, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`+"\n")
		second, r := decidedHook(t, ts, permissionRequest, "deny", "")
		checkOutput(t, second, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Gatehouse by operator:alice"}}}`+"\n")
		if r.Decision == nil || *r.Decision != "deny" {
			t.Fatalf("second request %v", r.Decision)
		}
	})
}

// The agent holds the hook's token: its PATCH of the request the hook filed
// (options relabelled so "Allow once" saves a rule) is refused, because the
// hook files sealed, and the operator's decision answers what was filed.
func TestHookAgentRelabelsItsRequest(t *testing.T) {
	ts := newTestServer(t)
	ids := ts.created(t)
	done := start(hookArgs(ts.URL, ts.Agent, "1m"), fixture(t, permissionRequest))
	id := testkit.Recv(t, ids, "the filed request id")
	agent := client.New(ts.URL, ts.Agent)
	r, err := agent.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Sealed {
		t.Fatalf("the hook filed an unsealed request: %+v", r)
	}
	relabelled := []api.Option{{ID: "project", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
	err = agent.Do(context.Background(), "PATCH", "/v1/requests/"+id, nil, map[string]any{"version": r.Version, "options": relabelled, "title": "Read the README"}, nil)
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusConflict || e.Code != "sealed" {
		t.Fatalf("patch as the agent: %v, want 409 sealed", err)
	}
	ts.decide(t, id, "deny", "")
	res := testkit.Recv(t, done, "the command to end")
	checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Gatehouse by operator:alice"}}}`+"\n")
}

func TestHookRefusesOtherInput(t *testing.T) {
	res := testkit.Recv(t, start(hookArgs("http://127.0.0.1:1", "t", "1m"), []byte(`{"hook_event_name":"PreCompact","session_id":"s1"}`)), "the command to end")
	if res.code == 0 || res.stdout != "" {
		t.Fatalf("exit %d stdout %q: an event the hook does not answer must not look answered", res.code, res.stdout)
	}
}

func TestHookRuleDecidesAtOnce(t *testing.T) {
	ts := newTestServer(t)
	rs, err := rules.ParseRules("rules.yaml", []byte("rules:\n  - name: pushes-ok\n    match:\n      tool: Bash\n      command: '^git push origin main$'\n    action: approve\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts.Store.Rules = rules.NewRuleSet(rs)
	t.Run("PreToolUse", func(t *testing.T) {
		res := testkit.Recv(t, start(hookArgs(ts.URL, ts.Agent, "1m"), fixture(t, preToolUse)), "the command to end")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Allowed in Gatehouse by rule:pushes-ok"}}`+"\n")
	})
	// Twice: the second filing's key names the first, settled request, which
	// was another call's; it must file anew, not give up.
	for _, name := range []string{"PermissionRequest", "PermissionRequest again"} {
		t.Run(name, func(t *testing.T) {
			res := testkit.Recv(t, start(hookArgs(ts.URL, ts.Agent, "1m"), fixture(t, permissionRequest)), "the command to end")
			checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`+"\n")
		})
	}
}
