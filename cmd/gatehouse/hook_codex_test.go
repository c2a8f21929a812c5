package main

import (
	"context"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models/rules"
)

// Hook inputs recorded from Codex 0.169.0 (testdata/codex/README.md).
const (
	codexPermissionRequest = "permissionrequest-bash.json"
	codexPreToolUse        = "pretooluse-bash.json"
)

func codexFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/codex/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func codexHookArgs(url, token, timeout string) []string {
	return []string{"hook", "codex", "--url", url, "--token", token, "--timeout", timeout}
}

// decidedCodexHook runs the Codex hook on a fixture, decides its request
// through the API, and returns what the hook printed and the final record.
func decidedCodexHook(t *testing.T, ts *testServer, name, option, note string) (result, *api.Request) {
	t.Helper()
	ids := ts.created(t)
	done := start(codexHookArgs(ts.URL, ts.Agent, "1m"), codexFixture(t, name))
	id := testkit.Recv(t, ids, "the filed request id")
	ts.decide(t, id, option, note)
	res := testkit.Recv(t, done, "the command to end")
	r, err := ts.Operator.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return res, r
}

func TestHookCodexPermissionRequest(t *testing.T) {
	t.Run("files the permission request Gatehouse writes", func(t *testing.T) {
		_, r := decidedCodexHook(t, newTestServer(t), codexPermissionRequest, "once", "")
		if r.Kind != "permission" || r.Tool != "Bash" || r.Command != "git push origin main" || r.Title != "Run: git push origin main" {
			t.Fatalf("kind/tool/command/title = %q %q %q %q", r.Kind, r.Tool, r.Command, r.Title)
		}
		if want := "Codex asks to use Bash in /home/dev/project: Pushing needs to write outside the workspace."; r.Summary != want {
			t.Fatalf("summary = %q, want %q", r.Summary, want)
		}
		if want := "{\n  \"command\": \"git push origin main\",\n  \"description\": \"Pushing needs to write outside the workspace.\"\n}"; r.Detail != want {
			t.Fatalf("detail = %q, want %q", r.Detail, want)
		}
		wantRef := map[string]string{
			"session": "01a230b1-c1a5-70b0-b3ae-d6f361e29229", "turn": "01a230b1-c1c2-7e53-b249-c46acb94661e", "cwd": "/home/dev/project",
			"transcript_path": "/home/dev/.codex/sessions/2026/12/01/rollout-2026-12-01T08-21-25-01a230b1-c1a5-70b0-b3ae-d6f361e29229.jsonl",
		}
		if r.Source != "session" || !reflect.DeepEqual(r.SourceRef, wantRef) {
			t.Fatalf("source %q ref %v", r.Source, r.SourceRef)
		}
		wantOpts := []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
		if !reflect.DeepEqual(r.Options, wantOpts) {
			t.Fatalf("options = %v", r.Options)
		}
	})
	t.Run("allow", func(t *testing.T) {
		res, _ := decidedCodexHook(t, newTestServer(t), codexPermissionRequest, "once", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`+"\n")
	})
	t.Run("deny", func(t *testing.T) {
		res, _ := decidedCodexHook(t, newTestServer(t), codexPermissionRequest, "deny", "")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Gatehouse by operator:alice"}}}`+"\n")
	})
	t.Run("the operator's note is the message", func(t *testing.T) {
		res, _ := decidedCodexHook(t, newTestServer(t), codexPermissionRequest, "deny", "push to a branch and open a PR instead")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"push to a branch and open a PR instead"}}}`+"\n")
	})
	t.Run("server down prints nothing", func(t *testing.T) {
		down := httptest.NewServer(nil)
		down.Close()
		res := testkit.Recv(t, start(codexHookArgs(down.URL, "whatever", "1m"), codexFixture(t, codexPermissionRequest)), "the command to end")
		checkOutput(t, res, "")
	})
	t.Run("wrong token prints nothing and files nothing", func(t *testing.T) {
		ts := newTestServer(t)
		res := testkit.Recv(t, start(codexHookArgs(ts.URL, "gh_wrong", "1m"), codexFixture(t, codexPermissionRequest)), "the command to end")
		checkOutput(t, res, "")
		if n, _ := ts.Store.CountOpen(context.Background()); n != 0 {
			t.Fatalf("%d open requests after a refused token", n)
		}
	})
	t.Run("timeout prints nothing and cancels the request", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		res := testkit.Recv(t, start(codexHookArgs(ts.URL, ts.Agent, "1s"), codexFixture(t, codexPermissionRequest)), "the command to end")
		checkOutput(t, res, "")
		if !strings.Contains(res.stderr, "no decision in Gatehouse within 1s") {
			t.Fatalf("stderr = %q", res.stderr)
		}
		checkStatus(t, ts, testkit.Recv(t, ids, "the filed request id"), "cancelled")
	})
	t.Run("a cancelled request prints nothing", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := start(codexHookArgs(ts.URL, ts.Agent, "1m"), codexFixture(t, codexPermissionRequest))
		id := testkit.Recv(t, ids, "the filed request id")
		if _, err := client.New(ts.URL, ts.Agent).Cancel(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		checkOutput(t, testkit.Recv(t, done, "the command to end"), "")
	})
	t.Run("the same command again in one turn is asked again", func(t *testing.T) {
		ts := newTestServer(t)
		first, _ := decidedCodexHook(t, ts, codexPermissionRequest, "once", "")
		checkOutput(t, first, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`+"\n")
		second, r := decidedCodexHook(t, ts, codexPermissionRequest, "deny", "")
		checkOutput(t, second, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Gatehouse by operator:alice"}}}`+"\n")
		if r.Decision == nil || *r.Decision != "deny" {
			t.Fatalf("second request %v", r.Decision)
		}
	})
}

func TestHookCodexPreToolUse(t *testing.T) {
	t.Run("files with the tool call's id", func(t *testing.T) {
		_, r := decidedCodexHook(t, newTestServer(t), codexPreToolUse, "deny", "")
		if r.SourceRef["tool_use_id"] != "call_MockApiShell000000000001" || r.SourceRef["turn"] != "01a230b1-c7f6-74c3-9860-3be53ef0a708" {
			t.Fatalf("source_ref = %v", r.SourceRef)
		}
		if r.Command != "git push origin main" {
			t.Fatalf("command = %q", r.Command)
		}
	})
	t.Run("deny with the note as reason", func(t *testing.T) {
		res, _ := decidedCodexHook(t, newTestServer(t), codexPreToolUse, "deny", "not on main")
		checkOutput(t, res, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on main"}}`+"\n")
	})
	// Codex refuses an allow from PreToolUse: the hook stays silent and
	// Codex's own approval policy goes on.
	t.Run("allow prints nothing", func(t *testing.T) {
		res, _ := decidedCodexHook(t, newTestServer(t), codexPreToolUse, "once", "")
		checkOutput(t, res, "")
	})
	t.Run("server down prints nothing", func(t *testing.T) {
		down := httptest.NewServer(nil)
		down.Close()
		checkOutput(t, testkit.Recv(t, start(codexHookArgs(down.URL, "whatever", "1m"), codexFixture(t, codexPreToolUse)), "the command to end"), "")
	})
	t.Run("timeout prints nothing and cancels the request", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		checkOutput(t, testkit.Recv(t, start(codexHookArgs(ts.URL, ts.Agent, "1s"), codexFixture(t, codexPreToolUse)), "the command to end"), "")
		checkStatus(t, ts, testkit.Recv(t, ids, "the filed request id"), "cancelled")
	})
}

func TestHookCodexRefusesOtherInput(t *testing.T) {
	for name, in := range map[string][]byte{
		"PostToolUse":           codexFixture(t, "posttooluse-bash.json"),
		"not JSON":              []byte("git push"),
		"no command":            []byte(`{"session_id":"s","turn_id":"t","cwd":"/x","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{}}`),
		"PreToolUse without id": []byte(`{"session_id":"s","turn_id":"t","cwd":"/x","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			res := testkit.Recv(t, start(codexHookArgs("http://127.0.0.1:1", "t", "1m"), in), "the command to end")
			// Exit 2 would be a deny to Codex; 1 with no output is no decision.
			if res.code != 1 || res.stdout != "" {
				t.Fatalf("exit %d stdout %q, want exit 1 and nothing printed", res.code, res.stdout)
			}
		})
	}
}

func TestHookCodexRuleDecidesAtOnce(t *testing.T) {
	ts := newTestServer(t)
	rs, err := rules.ParseRules("rules.yaml", []byte("rules:\n  - name: pushes-ok\n    match:\n      tool: Bash\n      command: '^git push origin main$'\n    action: approve\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts.Store.Rules = rules.NewRuleSet(rs)
	for _, name := range []string{"PermissionRequest", "PermissionRequest again"} {
		t.Run(name, func(t *testing.T) {
			checkOutput(t, testkit.Recv(t, start(codexHookArgs(ts.URL, ts.Agent, "1m"), codexFixture(t, codexPermissionRequest)), "the command to end"),
				`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`+"\n")
		})
	}
}

// The agent, with its own token, tries to get its own request approved.
func TestHookCodexAgentCannotApproveItself(t *testing.T) {
	ts := newTestServer(t)
	ids := ts.created(t)
	done := start(codexHookArgs(ts.URL, ts.Agent, "1s"), codexFixture(t, codexPermissionRequest))
	id := testkit.Recv(t, ids, "the filed request id")
	self := client.New(ts.URL, ts.Agent)
	_, err := self.Decide(context.Background(), id, 1, "once", "")
	var e *client.Error
	if err == nil || !asClientError(err, &e) || e.Status != 403 {
		t.Fatalf("agent decide: %v, want 403", err)
	}
	checkOutput(t, testkit.Recv(t, done, "the command to end"), "")
	checkStatus(t, ts, id, "cancelled")
}

func asClientError(err error, e **client.Error) bool {
	x, ok := err.(*client.Error)
	*e = x
	return ok
}

func checkStatus(t *testing.T, ts *testServer, id, want string) {
	t.Helper()
	r, err := ts.Operator.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != want {
		t.Fatalf("status = %q, want %q", r.Status, want)
	}
}
