package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
)

// The session fixtures are one recorded `claude -p` session, and the
// Notifications and SubagentStop of interactive sessions
// (testdata/claude-code/README.md).
const (
	stopFixture       = "stop.json"
	stopActiveFixture = "stop-active.json"
	promptFixture     = "userpromptsubmit.json"
	startFixture      = "sessionstart.json"
	endFixture        = "sessionend.json"
	postToolFixture   = "posttooluse-bash.json"
	recordedSession   = "1af2af8c-273b-4c2f-8c50-b518cf35b396"

	permissionPromptFixture = "notification-permission-prompt.json"
	idlePromptFixture       = "notification-idle-prompt.json"
	elicitationFixture      = "notification-elicitation-dialog.json"
	elicitationDoneFixture  = "notification-elicitation-response.json"
	needsInputFixture       = "notification-agent-needs-input.json"
	subagentStopFixture     = "subagentstop.json"
	interactiveSession      = "9548579f-d269-43e4-be9c-f8c255f73da4"
)

// inSession is a recorded input moved into another recorded session: the
// `claude -p` and the interactive recordings are of two sessions.
func inSession(t *testing.T, name, session string) []byte {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal(fixture(t, name), &in); err != nil {
		t.Fatal(err)
	}
	in["session_id"] = session
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sessionHookBody is sessionHook on a hook input given as bytes.
func sessionHookBody(t *testing.T, url, token string, body []byte) {
	t.Helper()
	checkOutput(t, testkit.Recv(t, start(hookArgs(url, token, "1m"), body), "the hook to end"), "")
}

// hookBudgets are the timeouts `gatehouse hook AGENT --print-settings` gives
// each event's hook (agent: claude-code or codex): the agent gives up on, or
// kills, a hook past its timeout. Each event has one command hook, and only
// the permission hook a matcher.
func hookBudgets(t *testing.T, agent string) map[string]time.Duration {
	t.Helper()
	res := testkit.Recv(t, start([]string{"hook", agent, "--print-settings"}, nil), "the command to end")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var got struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
				Timeout       int
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, res.stdout)
	}
	budgets := map[string]time.Duration{}
	for ev, entries := range got.Hooks {
		if len(entries) != 1 || len(entries[0].Hooks) != 1 || entries[0].Hooks[0].Type != "command" || entries[0].Hooks[0].Timeout == 0 {
			t.Fatalf("%s: %+v", ev, entries)
		}
		if (ev == "PermissionRequest") != (entries[0].Matcher != nil) {
			t.Fatalf("%s: matcher %v; only the permission hook takes one", ev, entries[0].Matcher)
		}
		budgets[ev] = time.Duration(entries[0].Hooks[0].Timeout) * time.Second
	}
	return budgets
}

// sessionHook runs the hook on a fixture and checks it exited 0 printing nothing.
func sessionHook(t *testing.T, url, token, name string, extra ...string) {
	t.Helper()
	res := testkit.Recv(t, start(append(hookArgs(url, token, "1m"), extra...), fixture(t, name)), "the hook to end")
	checkOutput(t, res, "")
}

// waitingOf is the session's waiting item as the operator sees it.
func waitingOf(t *testing.T, ts *testServer, session string) *api.Request {
	t.Helper()
	var list api.AgentSessions
	if err := ts.Operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		if s.ID == session && s.WaitingID != nil {
			r, err := ts.Operator.Get(context.Background(), *s.WaitingID)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	return nil
}

// answer gives the operator's free-text answer on a waiting item.
func (ts *testServer) answer(t *testing.T, id, text string) {
	t.Helper()
	r, err := ts.Operator.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"version": r.Version, "decision": nil, "answer": text}
	if err := ts.Operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+id+"/decide", nil, body, nil); err != nil {
		t.Fatal(err)
	}
}

func TestHookSessionEvents(t *testing.T) {
	t.Run("stop opens the waiting item with the last message; a prompt moves it on", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHook(t, ts.URL, ts.Agent, startFixture)
		sessionHook(t, ts.URL, ts.Agent, stopFixture)
		w := waitingOf(t, ts, recordedSession)
		if w == nil || w.Kind != models.KindWaiting || w.Detail != "All pushed, nonce-abc" || w.SourceRef["session"] != recordedSession || w.SourceRef["cwd"] != "/home/dev/proj" {
			t.Fatalf("waiting item: %+v", w)
		}
		if w.AllowAnswer {
			t.Fatal("a stop no hook waits behind takes an answer nothing would carry back")
		}
		sessionHook(t, ts.URL, ts.Agent, promptFixture)
		got, _ := ts.Operator.Get(context.Background(), w.ID)
		if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaMovedOn {
			t.Fatalf("after the prompt: %+v", got)
		}
	})
	t.Run("session end resolves it as ended", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHook(t, ts.URL, ts.Agent, stopFixture)
		w := waitingOf(t, ts, recordedSession)
		sessionHook(t, ts.URL, ts.Agent, endFixture)
		got, _ := ts.Operator.Get(context.Background(), w.ID)
		if got.Status != models.StatusResolved || *got.DecidedVia != models.ViaEnded {
			t.Fatalf("after the end: %+v", got)
		}
	})
	t.Run("a tool call records the session and moves nothing else", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHook(t, ts.URL, ts.Agent, postToolFixture)
		var list api.AgentSessions
		if err := ts.Operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].State != models.SessionWorking {
			t.Fatalf("%+v %v", list, err)
		}
	})
	t.Run("a decided permission request moves the session on", func(t *testing.T) {
		ts := newTestServer(t)
		var perm map[string]any
		if err := json.Unmarshal(fixture(t, permissionRequest), &perm); err != nil {
			t.Fatal(err)
		}
		var stop map[string]any
		if err := json.Unmarshal(fixture(t, stopFixture), &stop); err != nil {
			t.Fatal(err)
		}
		stop["session_id"] = perm["session_id"] // the recordings are of two sessions
		body, _ := json.Marshal(stop)
		checkOutput(t, testkit.Recv(t, start(hookArgs(ts.URL, ts.Agent, "1m"), body), "the stop hook"), "")
		w := waitingOf(t, ts, perm["session_id"].(string))
		if w == nil {
			t.Fatal("no waiting item")
		}
		res, _ := decidedHook(t, ts, permissionRequest, "once", "")
		if res.code != 0 || res.stdout == "" {
			t.Fatalf("%+v", res)
		}
		got, _ := ts.Operator.Get(context.Background(), w.ID)
		if got.Status != models.StatusResolved || *got.DecidedVia != models.ViaMovedOn {
			t.Fatalf("after the permission was decided: %+v", got)
		}
	})
	t.Run("a recorded permission_prompt, elicitation_dialog or agent_needs_input opens the waiting item with its message", func(t *testing.T) {
		for name, want := range map[string]string{permissionPromptFixture: "Claude needs your permission", elicitationFixture: "Claude Code needs your input",
			needsInputFixture: "Auto mode can't check actions in this session and needs your choice"} {
			t.Run(name, func(t *testing.T) {
				ts := newTestServer(t)
				sessionHook(t, ts.URL, ts.Agent, name)
				var in struct {
					Session string `json:"session_id"`
				}
				if err := json.Unmarshal(fixture(t, name), &in); err != nil {
					t.Fatal(err)
				}
				w := waitingOf(t, ts, in.Session)
				if w == nil || w.Kind != models.KindWaiting || w.Status != models.StatusOpen || w.Detail != want || w.SourceRef["cwd"] != "/home/dev/proj" || w.AllowAnswer {
					t.Fatalf("waiting item: %+v", w)
				}
			})
		}
	})
	t.Run("a recorded idle_prompt keeps the open waiting item and its last message", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHookBody(t, ts.URL, ts.Agent, inSession(t, stopFixture, interactiveSession))
		w := waitingOf(t, ts, interactiveSession)
		if w == nil || w.Detail != "All pushed, nonce-abc" {
			t.Fatalf("after the stop: %+v", w)
		}
		sessionHook(t, ts.URL, ts.Agent, idlePromptFixture)
		got := waitingOf(t, ts, interactiveSession)
		if got == nil || got.ID != w.ID || got.Status != models.StatusOpen || got.Detail != "All pushed, nonce-abc" {
			t.Fatalf("after the idle prompt: %+v", got)
		}
	})
	t.Run("a recorded idle_prompt alone opens a waiting item", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHook(t, ts.URL, ts.Agent, idlePromptFixture)
		if w := waitingOf(t, ts, interactiveSession); w == nil || w.Kind != models.KindWaiting || w.Status != models.StatusOpen {
			t.Fatalf("waiting item: %+v", w)
		}
	})
	t.Run("a recorded subagent stop moves the session on", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHookBody(t, ts.URL, ts.Agent, inSession(t, stopFixture, interactiveSession))
		w := waitingOf(t, ts, interactiveSession)
		if w == nil {
			t.Fatal("no waiting item")
		}
		sessionHook(t, ts.URL, ts.Agent, subagentStopFixture)
		got, _ := ts.Operator.Get(context.Background(), w.ID)
		if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaMovedOn {
			t.Fatalf("after the subagent stopped: %+v", got)
		}
	})
	t.Run("other recorded notifications record nothing", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHook(t, ts.URL, ts.Agent, elicitationDoneFixture)
		var list api.AgentSessions
		if err := ts.Operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &list); err != nil || len(list.Sessions) != 0 {
			t.Fatalf("%+v %v", list, err)
		}
	})
	t.Run("each recorded event answers within its hook's timeout with the server down or refusing", func(t *testing.T) {
		budgets := hookBudgets(t, "claude-code")
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		ts := newTestServer(t)
		for _, name := range []string{stopFixture, promptFixture, startFixture, endFixture, postToolFixture, permissionPromptFixture,
			idlePromptFixture, elicitationFixture, elicitationDoneFixture, needsInputFixture, subagentStopFixture} {
			var in struct {
				Event string `json:"hook_event_name"`
			}
			if err := json.Unmarshal(fixture(t, name), &in); err != nil {
				t.Fatal(err)
			}
			for _, url := range []string{down.URL, ts.URL} {
				t.Run(name+" at "+url, func(t *testing.T) {
					began := time.Now()
					sessionHook(t, url, "gh_nope", name, "--wait-reply", "1m")
					if took, budget := time.Since(began), budgets[in.Event]; budget == 0 || took >= budget {
						t.Fatalf("%s took %s; its hook's timeout is %s", in.Event, took, budget)
					}
				})
			}
		}
	})
}

func TestHookWaitReply(t *testing.T) {
	t.Run("a stop waits for the operator's reply and continues the session with it", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := start(append(hookArgs(ts.URL, ts.Agent, "1m"), "--wait-reply", "1m"), fixture(t, stopFixture))
		id := testkit.Recv(t, ids, "the waiting item")
		ts.answer(t, id, "Now tag the release")
		checkOutput(t, testkit.Recv(t, done, "the hook to end"), `{"decision":"block","reason":"Now tag the release"}`+"\n")
	})
	t.Run("a stop already continued by the hook answers at once, with no block", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHook(t, ts.URL, ts.Agent, stopActiveFixture, "--wait-reply", "10m")
		if w := waitingOf(t, ts, recordedSession); w == nil || w.Detail != "All pushed, nonce-abc" || w.AllowAnswer {
			t.Fatalf("the stop still shows as waiting, taking no answer (nothing waits for one): %+v", w)
		}
	})
	t.Run("moving on ends the wait with no block", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := start(append(hookArgs(ts.URL, ts.Agent, "1m"), "--wait-reply", "1m"), fixture(t, stopFixture))
		testkit.Recv(t, ids, "the waiting item")
		sessionHook(t, ts.URL, ts.Agent, promptFixture)
		checkOutput(t, testkit.Recv(t, done, "the hook to end"), "")
	})
	t.Run("no reply within the wait: no block, the item stays open", func(t *testing.T) {
		ts := newTestServer(t)
		sessionHook(t, ts.URL, ts.Agent, stopFixture, "--wait-reply", "1s")
		if w := waitingOf(t, ts, recordedSession); w == nil || w.Status != models.StatusOpen {
			t.Fatalf("%+v", w)
		}
	})
}

func TestHookPrintSettings(t *testing.T) {
	budgets := hookBudgets(t, "claude-code") // one command hook each, a matcher only on the permission hook
	for _, ev := range []string{"PermissionRequest", "Notification", "Stop", "SubagentStop", "UserPromptSubmit", "SessionStart", "SessionEnd", "PostToolUse"} {
		if budgets[ev] == 0 {
			t.Fatalf("%s: no hook", ev)
		}
	}
}
