package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

const hookRules = `rules:
  - name: git-read
    match:
      tool: Bash
      command: '^git status'
    action: approve
`

// hookEnv is a server with a rule approving `git status`, an agent and an
// operator, and a channel that says when a wait has started.
type hookEnv struct {
	*webtest.Env
	agent, op string
	started   chan struct{}
}

func newHookEnv(t *testing.T, dialect string) *hookEnv {
	t.Helper()
	st, changes := storetest.Store(t, dialect)
	rs, err := rules.ParseRules("rules.yaml", []byte(hookRules))
	if err != nil {
		t.Fatal(err)
	}
	st.Rules = rules.NewRuleSet(rs)
	started := make(chan struct{}, 16)
	env := webtest.NewOn(t, st, changes, web.Config{OnWaitStart: func() { started <- struct{}{} }})
	return &hookEnv{Env: env, agent: env.Token(models.RoleAgent, "claude"), op: env.Token(models.RoleOperator, "alice"), started: started}
}

// hookInput is a recorded Claude Code hook input (testdata of the command
// hook) with the Bash command replaced.
func hookInput(t *testing.T, event, command string) []byte {
	t.Helper()
	name := map[string]string{hookanswer.EventPreToolUse: "pretooluse-bash.json", hookanswer.EventPermissionRequest: "permissionrequest-bash.json"}[event]
	raw, err := os.ReadFile(filepath.Join("..", "cmd", "gatehouse", "testdata", "claude-code", name))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	in["tool_input"].(map[string]any)["command"] = command
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type hookResult struct {
	status int
	body   []byte
}

// hook posts one hook input and answers the result on a channel, so a test
// can act while the call waits.
func (e *hookEnv) hook(query, token string, body []byte) <-chan hookResult {
	out := make(chan hookResult, 1)
	go func() {
		status, b := e.DoCtx(context.Background(), http.MethodPost, "/v1/hooks/claude-code"+query, token, body)
		out <- hookResult{status, b}
	}()
	return out
}

// openRequest is the one open request, as the operator lists it.
func (e *hookEnv) openRequest(t *testing.T) (id string, version int) {
	t.Helper()
	status, body := e.Do(http.MethodGet, "/v1/requests?status=open", e.op, nil)
	var list struct {
		Requests []struct {
			ID      string `json:"id"`
			Version int    `json:"version"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil || len(list.Requests) != 1 {
		t.Fatalf("open requests: %d %s %v", status, body, err)
	}
	return list.Requests[0].ID, list.Requests[0].Version
}

func (e *hookEnv) decide(t *testing.T, id string, version int, decision string) {
	t.Helper()
	if status, body := e.Do(http.MethodPost, "/v1/requests/"+id+"/decide", e.op, map[string]any{"version": version, "decision": decision}); status != http.StatusOK {
		t.Fatalf("decide %s: %d %s", id, status, body)
	}
}

// decisionOf is PreToolUse's permissionDecision and its reason.
func decisionOf(t *testing.T, r hookResult) (decision, reason string) {
	t.Helper()
	var out struct {
		HookSpecificOutput struct {
			HookEventName            string `json:"hookEventName"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(r.body, &out); r.status != http.StatusOK || err != nil || out.HookSpecificOutput.HookEventName != hookanswer.EventPreToolUse {
		t.Fatalf("hook answer: %d %s %v", r.status, r.body, err)
	}
	return out.HookSpecificOutput.PermissionDecision, out.HookSpecificOutput.PermissionDecisionReason
}

func TestClaudeCodeHTTPHook(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("a rule-approved PreToolUse answers allow at once", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			res := testkit.Recv(t, e.hook("", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git status")), "the hook answer")
			if d, reason := decisionOf(t, res); d != "allow" || !strings.Contains(reason, "rule:git-read") {
				t.Fatalf("rule-approved call: %s (%s), want allow by rule:git-read", d, reason)
			}
			if len(e.started) != 0 {
				t.Fatal("a rule-approved call waited")
			}
		})

		t.Run("an operator's decision releases a waiting call", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			call := e.hook("?timeout=60", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git push origin main"))
			testkit.Recv(t, e.started, "the hook's wait to start")
			id, version := e.openRequest(t)
			e.decide(t, id, version, "once")
			if d, reason := decisionOf(t, testkit.Recv(t, call, "the released hook answer")); d != "allow" || !strings.Contains(reason, "alice") {
				t.Fatalf("after the operator's allow: %s (%s)", d, reason)
			}
		})

		t.Run("a timeout answers ask and cancels the request", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			res := testkit.Recv(t, e.hook("?timeout=1", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git push origin main")), "the hook to time out")
			if d, reason := decisionOf(t, res); d != "ask" || !strings.Contains(reason, "No decision") {
				t.Fatalf("timed out: %s (%s), want ask", d, reason)
			}
			status, body := e.Do(http.MethodGet, "/v1/requests?status=cancelled", e.op, nil)
			if status != http.StatusOK || !strings.Contains(string(body), `"status":"cancelled"`) {
				t.Fatalf("the request the hook gave up on is not cancelled: %d %s", status, body)
			}
		})

		t.Run("a caller that hangs up has its request cancelled", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			ctx, hangUp := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.DoCtx(ctx, http.MethodPost, "/v1/hooks/claude-code?timeout=60", e.agent, hookInput(t, hookanswer.EventPreToolUse, "git push origin main"))
			}()
			testkit.Recv(t, e.started, "the hook's wait to start")
			id, _ := e.openRequest(t)
			hangUp()
			testkit.Recv(t, done, "the hung-up call to return")
			status, body := e.Do(http.MethodGet, "/v1/requests/"+id+"/wait?timeout=10", e.op, nil)
			if status != http.StatusOK || !strings.Contains(string(body), `"status":"cancelled"`) {
				t.Fatalf("after the caller hung up: %d %s, want the request cancelled", status, body)
			}
		})

		t.Run("a PermissionRequest is answered in Claude Code's shape", func(t *testing.T) {
			e := newHookEnv(t, dialect)
			call := e.hook("?timeout=60", e.agent, hookInput(t, hookanswer.EventPermissionRequest, "git push origin main"))
			testkit.Recv(t, e.started, "the hook's wait to start")
			id, version := e.openRequest(t)
			e.decide(t, id, version, "once")
			res := testkit.Recv(t, call, "the released hook answer")
			want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`
			if res.status != http.StatusOK || string(bytes.TrimSpace(res.body)) != want {
				t.Fatalf("PermissionRequest allow: %d %s, want %s", res.status, res.body, want)
			}

			// No decision: an empty 2xx, so Claude Code shows its own prompt.
			res = testkit.Recv(t, e.hook("?timeout=1", e.agent, hookInput(t, hookanswer.EventPermissionRequest, "git push --force")), "the hook to time out")
			if res.status != http.StatusNoContent || len(res.body) != 0 {
				t.Fatalf("PermissionRequest without a decision: %d %q, want 204 and no body", res.status, res.body)
			}
		})

		// The agent can compute the hook's Idempotency-Key. It files first under
		// that key with another body, and has that allowed: the hook must not
		// take that allow as the answer to what it files.
		t.Run("a pre-claimed key never allows", func(t *testing.T) {
			for _, event := range []string{hookanswer.EventPreToolUse, hookanswer.EventPermissionRequest} {
				e := newHookEnv(t, dialect)
				raw := hookInput(t, event, "git push origin main")
				in, err := hookanswer.ParseClaudeCodeHook(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				n := in.NewRequest(web.HookDefaultWait * time.Second)
				n.Risk = "low"
				status, body := e.DoHeader(http.MethodPost, "/v1/requests", e.agent, n, "Idempotency-Key", in.IdempotencyKey())
				if status != http.StatusCreated {
					t.Fatalf("the agent's filing: %d %s", status, body)
				}
				id, version := e.openRequest(t)
				e.decide(t, id, version, "once")

				res := testkit.Recv(t, e.hook("", e.agent, raw), "the hook answer")
				if strings.Contains(string(res.body), `"allow"`) {
					t.Fatalf("%s: the hook allowed on the agent's pre-claimed record: %s", event, res.body)
				}
				if event == hookanswer.EventPermissionRequest {
					if res.status != http.StatusNoContent {
						t.Fatalf("PermissionRequest on a pre-claimed key: %d %s, want 204", res.status, res.body)
					}
					continue
				}
				if d, reason := decisionOf(t, res); d != "ask" || !strings.Contains(reason, models.ECodeKeyReused) {
					t.Fatalf("PreToolUse on a pre-claimed key: %s (%s), want ask naming %s", d, reason, models.ECodeKeyReused)
				}
			}
		})
	})
}
