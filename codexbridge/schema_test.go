package codexbridge_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/codexbridge"
	"github.com/google/jsonschema-go/jsonschema"
)

// schema loads one of the schemas Codex 0.169.0 generated (testdata/schema).
func schema(t *testing.T, name string) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile("testdata/schema/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rs
}

func validate(t *testing.T, rs *jsonschema.Resolved, name string, msg []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(msg, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Fatalf("%s does not match %s: %v", msg, name, err)
	}
}

// Every answer the bridge can send Codex matches Codex's own response schema,
// for params that match its request schema.
func TestApprovalAnswersMatchCodexSchemas(t *testing.T) {
	commandParams := approvalParams(t, "appserver-accept.jsonrpc.jsonl")
	cases := []struct {
		label, method, params, name string
		raw                         json.RawMessage
		want                        []api.Option
	}{
		{"the recorded command approval", codexbridge.MethodCommandApproval, "CommandExecutionRequestApprovalParams", "CommandExecutionRequestApprovalResponse", commandParams, []api.Option{
			{ID: "accept", Label: "Allow once", Effect: "allow"},
			{ID: "always", Label: "Always allow commands starting `git push origin main`", Effect: "allow"},
			{ID: "cancel", Label: "Stop the turn", Effect: "deny"},
		}},
		{"a command with every plain decision", codexbridge.MethodCommandApproval, "CommandExecutionRequestApprovalParams", "CommandExecutionRequestApprovalResponse",
			json.RawMessage(`{"threadId":"t1","turnId":"u1","itemId":"call_1","startedAtMs":1,"command":"ls","cwd":"/p","availableDecisions":["accept","acceptForSession","decline","cancel"]}`),
			[]api.Option{
				{ID: "accept", Label: "Allow once", Effect: "allow"},
				{ID: "accept_for_session", Label: "Allow for this session", Effect: "allow"},
				{ID: "decline", Label: "Deny", Effect: "deny"},
				{ID: "cancel", Label: "Stop the turn", Effect: "deny"},
			}},
		{"a file change", codexbridge.MethodFileChangeApproval, "FileChangeRequestApprovalParams", "FileChangeRequestApprovalResponse",
			json.RawMessage(`{"threadId":"t1","turnId":"u1","itemId":"call_2","startedAtMs":1,"reason":"edit the README","grantRoot":null}`),
			[]api.Option{
				{ID: "accept", Label: "Allow once", Effect: "allow"},
				{ID: "accept_for_session", Label: "Allow for this session", Effect: "allow"},
				{ID: "decline", Label: "Deny", Effect: "deny"},
				{ID: "cancel", Label: "Stop the turn", Effect: "deny"},
			}},
		{"a permissions request", codexbridge.MethodPermissionsApproval, "PermissionsRequestApprovalParams", "PermissionsRequestApprovalResponse",
			json.RawMessage(`{"threadId":"t1","turnId":"u1","itemId":"call_3","startedAtMs":1,"cwd":"/p","reason":"needs the network","permissions":{"network":{"enabled":true},"fileSystem":null}}`),
			[]api.Option{
				{ID: "accept", Label: "Allow for this turn", Effect: "allow"},
				{ID: "accept_for_session", Label: "Allow for this session", Effect: "allow"},
				{ID: "decline", Label: "Deny", Effect: "deny"},
			}},
	}
	for _, c := range cases {
		t.Run(c.label, func(t *testing.T) {
			validate(t, schema(t, c.params), c.params, c.raw)
			n, results, err := codexbridge.Approval(c.method, c.raw)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(n.Options, c.want) {
				t.Fatalf("options = %+v, want %+v", n.Options, c.want)
			}
			resp := schema(t, c.name)
			for _, o := range n.Options {
				r, ok := results[o.ID]
				if !ok {
					t.Fatalf("option %s has no answer for Codex", o.ID)
				}
				validate(t, resp, c.name, r)
			}
			if len(results) != len(n.Options) {
				t.Fatalf("%d answers for %d options", len(results), len(n.Options))
			}
		})
	}
	t.Run("the amendment is sent back as Codex offered it", func(t *testing.T) {
		_, results, err := codexbridge.Approval(codexbridge.MethodCommandApproval, commandParams)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"decision":{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["git","push","origin","main"]}}}`
		if string(results["always"]) != want {
			t.Fatalf("always answers %s, want %s", results["always"], want)
		}
	})
	t.Run("the check refuses a decision Codex does not take", func(t *testing.T) {
		var v any
		_ = json.Unmarshal([]byte(`{"decision":"acceptAlways"}`), &v)
		if err := schema(t, "CommandExecutionRequestApprovalResponse").Validate(v); err == nil {
			t.Fatal("an unknown decision passed the schema check")
		}
	})
	t.Run("other server requests are not filed", func(t *testing.T) {
		if _, _, err := codexbridge.Approval("item/tool/requestUserInput", json.RawMessage(`{}`)); err != codexbridge.ErrNotApproval {
			t.Fatalf("err = %v, want ErrNotApproval", err)
		}
	})
}

// approvalParams are the params of the recorded approval server-request.
func approvalParams(t *testing.T, recording string) json.RawMessage {
	t.Helper()
	entries, err := transcript("testdata/" + recording)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(e.Msg, &m) == nil && m.Method == codexbridge.MethodCommandApproval {
			return m.Params
		}
	}
	t.Fatalf("no %s in %s", codexbridge.MethodCommandApproval, recording)
	return nil
}

// The thread and turn notifications the bridge reports sessions from match
// Codex's schemas as recorded, and the schemas require what the bridge reads
// (threadId, the turn; the thread's id and cwd).
func TestSessionNotificationsMatchCodexSchemas(t *testing.T) {
	names := map[string]string{"thread/started": "ThreadStartedNotification", "turn/started": "TurnStartedNotification",
		"turn/completed": "TurnCompletedNotification", "item/completed": "ItemCompletedNotification"}
	entries, err := transcript("testdata/appserver-accept.jsonrpc.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range entries {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(e.Msg, &m) != nil || names[m.Method] == "" {
			continue
		}
		seen[m.Method]++
		validate(t, schema(t, names[m.Method]), names[m.Method], m.Params)
	}
	if len(seen) != len(names) {
		t.Fatalf("the recording holds %v of %v", seen, names)
	}
	for name, required := range map[string][]string{"TurnStartedNotification": {"threadId", "turn"}, "TurnCompletedNotification": {"threadId", "turn"},
		"ItemCompletedNotification": {"threadId", "item"}} {
		if !subset(required, schema(t, name).Schema().Required) {
			t.Fatalf("%s requires %v, not all of %v", name, schema(t, name).Schema().Required, required)
		}
	}
	thread := schema(t, "ThreadStartedNotification").Schema().Definitions["Thread"]
	if thread == nil || !subset([]string{"id", "cwd"}, thread.Required) {
		t.Fatalf("Thread does not require id and cwd: %+v", thread)
	}
}

func subset(want, of []string) bool {
	for _, w := range want {
		if !slices.Contains(of, w) {
			return false
		}
	}
	return true
}
