package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
)

// The session fixtures are one recorded `claude -p` session (testdata/claude-code/README.md).
const (
	stopFixture       = "stop.json"
	stopActiveFixture = "stop-active.json"
	promptFixture     = "userpromptsubmit.json"
	startFixture      = "sessionstart.json"
	endFixture        = "sessionend.json"
	postToolFixture   = "posttooluse-bash.json"
	recordedSession   = "1af2af8c-273b-4c2f-8c50-b518cf35b396"
)

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
	t.Run("a server that is down or refuses never fails the session", func(t *testing.T) {
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		ts := newTestServer(t)
		for _, name := range []string{stopFixture, promptFixture, startFixture, endFixture, postToolFixture} {
			sessionHook(t, down.URL, "gh_nope", name, "--wait-reply", "1m")
			sessionHook(t, ts.URL, "gh_nope", name, "--wait-reply", "1m")
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
	res := testkit.Recv(t, start([]string{"hook", "claude-code", "--print-settings"}, nil), "the command to end")
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
	for _, ev := range []string{"PermissionRequest", "Notification", "Stop", "SubagentStop", "UserPromptSubmit", "SessionStart", "SessionEnd", "PostToolUse"} {
		entries := got.Hooks[ev]
		if len(entries) != 1 || len(entries[0].Hooks) != 1 || entries[0].Hooks[0].Type != "command" || entries[0].Hooks[0].Timeout == 0 {
			t.Fatalf("%s: %+v", ev, entries)
		}
		if (ev == "PermissionRequest") != (entries[0].Matcher != nil) {
			t.Fatalf("%s: matcher %v; only the permission hook takes one", ev, entries[0].Matcher)
		}
	}
}
