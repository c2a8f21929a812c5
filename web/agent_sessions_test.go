package web_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// oaAgentSessions calls the agent session routes with each status they
// document that a test reaches.
func oaAgentSessions(t *testing.T, e *oaEnv) {
	ev := map[string]any{"session": "oa-session", "agent": "claude-code", "event": "waiting", "cwd": "/home/dev/proj", "message": "All pushed"}
	got := decodeAs[api.SessionEventAnswer](t, e.do(t, oaCall{op: "postSessionEvent", method: "POST", path: "/v1/agent-sessions/events", token: e.agent, body: ev, want: 200}))
	if got.Waiting == nil || got.Session.State != models.SessionWaiting {
		t.Fatalf("%+v", got)
	}
	e.do(t, oaCall{op: "postSessionEvent", method: "POST", path: "/v1/agent-sessions/events", token: e.agent, body: map[string]any{"session": "s1", "agent": "claude-code", "event": "approve"}, want: 400})
	e.do(t, oaCall{op: "postSessionEvent", method: "POST", path: "/v1/agent-sessions/events", token: e.agent, body: map[string]any{"session": "s1", "agent": "claude-code", "event": "moved", "colour": "red"}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "postSessionEvent", method: "POST", path: "/v1/agent-sessions/events", token: e.op, body: ev, want: 403})
	e.do(t, oaCall{op: "postSessionEvent", method: "POST", path: "/v1/agent-sessions/events", body: ev, want: 401, badRequest: true})
	e.do(t, oaCall{op: "listAgentSessions", method: "GET", path: "/v1/agent-sessions", token: e.op, want: 200})
	e.do(t, oaCall{op: "listAgentSessions", method: "GET", path: "/v1/agent-sessions", token: e.agent, want: 200})
	e.do(t, oaCall{op: "listAgentSessions", method: "GET", path: "/v1/agent-sessions", want: 401, badRequest: true})
}

func TestAgentSessionRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newOAEnv(t, dialect)
		event := func(token, session, kind, msg string) api.SessionEventAnswer {
			t.Helper()
			ev := map[string]any{"session": session, "agent": "claude-code", "event": kind, "cwd": "/home/dev/proj", "message": msg, "can_reply": true}
			return decodeAs[api.SessionEventAnswer](t, e.do(t, oaCall{op: "postSessionEvent", method: "POST", path: "/v1/agent-sessions/events", token: token, body: ev, want: 200}))
		}
		list := func(token string) []api.AgentSession {
			t.Helper()
			return decodeAs[api.AgentSessions](t, e.do(t, oaCall{op: "listAgentSessions", method: "GET", path: "/v1/agent-sessions", token: token, want: 200})).Sessions
		}

		t.Run("a waiting item takes a free-text answer from the operator, and approves nothing", func(t *testing.T) {
			w := event(e.agent, "s1", models.EventWaiting, "Which branch?").Waiting
			if w == nil || w.Kind != models.KindWaiting || w.Detail != "Which branch?" || !w.AllowAnswer || len(w.Options) != 0 {
				t.Fatalf("%+v", w)
			}
			// The filing agent cannot answer its own item; an option is refused.
			e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + w.ID + "/decide", token: e.agent, body: map[string]any{"version": w.Version, "decision": nil, "answer": "main"}, want: 403})
			e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + w.ID + "/decide", token: e.op, body: map[string]any{"version": w.Version, "decision": "allow"}, want: 422})
			got := decodeAs[api.Request](t, e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + w.ID + "/decide", token: e.op, body: map[string]any{"version": w.Version, "decision": nil, "answer": "main"}, want: 200}))
			if got.Status != models.StatusResolved || got.Answer == nil || *got.Answer != "main" || got.Decision != nil {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("a waiting item whose reporter cannot carry a reply takes no answer, and the operator may dismiss it", func(t *testing.T) {
			ev := map[string]any{"session": "s1b", "agent": "claude-code", "event": "waiting", "message": "Done"}
			w := decodeAs[api.SessionEventAnswer](t, e.do(t, oaCall{op: "postSessionEvent", method: "POST", path: "/v1/agent-sessions/events", token: e.agent, body: ev, want: 200})).Waiting
			if w == nil || w.AllowAnswer {
				t.Fatalf("%+v", w)
			}
			e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + w.ID + "/decide", token: e.op, body: map[string]any{"version": w.Version, "decision": nil, "answer": "go on"}, want: 400})
			e.do(t, oaCall{op: "dismissRequest", method: "POST", path: "/v1/requests/" + w.ID + "/dismiss", token: e.op, body: map[string]any{}, want: 200})
		})

		t.Run("an agent lists only its own sessions; the operator lists all, who waits first", func(t *testing.T) {
			event(e.agent, "s2", models.EventWaiting, "Done")
			event(e.other, "s3", models.EventStarted, "")
			for _, v := range list(e.other) {
				if v.ID != "s3" {
					t.Fatalf("the other agent sees %+v", v)
				}
			}
			all := list(e.op)
			var last api.AgentSession // the last of the list: the working s3
			for _, v := range all {
				if v.ID == "s2" && (v.State != models.SessionWaiting || v.LastMessage != "Done" || v.WaitingID == nil) {
					t.Fatalf("s2: %+v", v)
				}
				if v.State == models.SessionWaiting && last.State == models.SessionWorking {
					t.Fatalf("a waiting session after a working one: %+v", all)
				}
				last = v
			}
			if len(all) < 3 || last.ID != "s3" {
				t.Fatalf("operator's list: %+v", all)
			}
		})

		t.Run("another agent's events on the same session id leave the first's item open", func(t *testing.T) {
			w := event(e.agent, "s4", models.EventWaiting, "Mine").Waiting
			event(e.other, "s4", models.EventMoved, "")
			event(e.other, "s4", models.EventEnded, "")
			got := decodeAs[api.Request](t, e.do(t, oaCall{op: "getRequest", method: "GET", path: "/v1/requests/" + w.ID, token: e.op, want: 200}))
			if got.Status != models.StatusOpen || got.Version != w.Version {
				t.Fatalf("%+v", got)
			}
		})
	})
}

// recorded is a session event recorded from Claude Code (testdata of the command hook).
func recorded(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "cmd", "gatehouse", "testdata", "claude-code", name))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func TestClaudeCodeHTTPHookSessionEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newOAEnv(t, dialect)
		hook := func(token string, body map[string]any, want int) {
			t.Helper()
			e.do(t, oaCall{op: "answerClaudeCodeHook", method: "POST", path: "/v1/hooks/claude-code", token: token, body: body, want: want})
		}
		waiting := func(token string) *api.AgentSession {
			t.Helper()
			for _, v := range decodeAs[api.AgentSessions](t, e.do(t, oaCall{op: "listAgentSessions", method: "GET", path: "/v1/agent-sessions", token: token, want: 200})).Sessions {
				if v.ID == "1af2af8c-273b-4c2f-8c50-b518cf35b396" {
					return &v
				}
			}
			return nil
		}

		t.Run("every session event is answered 204 at once; stop waits, a tool call moves on", func(t *testing.T) {
			hook(e.agent, recorded(t, "sessionstart.json"), 204)
			hook(e.agent, recorded(t, "stop.json"), 204)
			v := waiting(e.agent)
			if v == nil || v.State != models.SessionWaiting || v.LastMessage != "All pushed, nonce-abc" || v.WaitingID == nil {
				t.Fatalf("after stop: %+v", v)
			}
			post := recorded(t, "posttooluse-bash.json")
			post["session_id"] = v.ID // the recording is of another session
			hook(e.agent, post, 204)
			got := decodeAs[api.Request](t, e.do(t, oaCall{op: "getRequest", method: "GET", path: "/v1/requests/" + *v.WaitingID, token: e.op, want: 200}))
			if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaMovedOn {
				t.Fatalf("after a tool call: %+v", got)
			}
			hook(e.agent, recorded(t, "userpromptsubmit.json"), 204)
			hook(e.agent, recorded(t, "sessionend.json"), 204)
			if v := waiting(e.agent); v.State != models.SessionEnded {
				t.Fatalf("after the end: %+v", v)
			}
		})
		t.Run("a notification that says it waits opens the item; others are ignored", func(t *testing.T) {
			n := recorded(t, "notification-permission-prompt.json")
			hook(e.agent, n, 204)
			n2 := recorded(t, "notification-elicitation-response.json")
			hook(e.agent, n2, 204)
			list := decodeAs[api.AgentSessions](t, e.do(t, oaCall{op: "listAgentSessions", method: "GET", path: "/v1/agent-sessions", token: e.agent, want: 200})).Sessions
			found := false
			for _, v := range list {
				if v.ID == n2["session_id"] {
					t.Fatalf("an ignored notification made %+v", v)
				}
				if v.ID == n["session_id"] {
					found = v.State == models.SessionWaiting && v.LastMessage == "Claude needs your permission"
				}
			}
			if !found {
				t.Fatalf("%+v", list)
			}
		})
		t.Run("a session event with no session id or a key twice records nothing and answers no decision", func(t *testing.T) {
			hook(e.agent, map[string]any{"hook_event_name": "Stop"}, 204)
			hook(e.agent, map[string]any{"hook_event_name": "Stop", "session_id": "k1", "SESSION_ID": "k2"}, 204)
			for _, v := range decodeAs[api.AgentSessions](t, e.do(t, oaCall{op: "listAgentSessions", method: "GET", path: "/v1/agent-sessions", token: e.agent, want: 200})).Sessions {
				if v.ID == "" || v.ID == "k1" || v.ID == "k2" {
					t.Fatalf("a refused event recorded %+v", v)
				}
			}
		})
	})
}

func TestClaudeCodeHTTPHookPermissionMovesOn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newHookEnv(t, dialect)
		t.Run("a PermissionRequest the operator decided resolves the session's waiting item", func(t *testing.T) {
			perm := hookInput(t, hookanswer.EventPermissionRequest, "git push origin main")
			var in map[string]any
			if err := json.Unmarshal(perm, &in); err != nil {
				t.Fatal(err)
			}
			stop := recorded(t, "stop.json")
			stop["session_id"] = in["session_id"] // the recordings are of two sessions
			body, _ := json.Marshal(stop)
			if res := testkit.Recv(t, e.hook("", e.agent, body), "the stop hook"); res.status != http.StatusNoContent {
				t.Fatalf("stop: %d %s", res.status, res.body)
			}
			done := e.hook("?timeout=60", e.agent, perm)
			testkit.Recv(t, e.started, "the permission hook to wait")
			var list api.List
			status, raw := e.Do(http.MethodGet, "/v1/requests?status=open", e.op, nil)
			if err := json.Unmarshal(raw, &list); status != http.StatusOK || err != nil || len(list.Requests) != 2 {
				t.Fatalf("open: %d %s", status, raw)
			}
			var waiting, permission api.Request
			for _, r := range list.Requests {
				if r.Kind == models.KindWaiting {
					waiting = r
				} else {
					permission = r
				}
			}
			e.decide(t, permission.ID, permission.Version, "once")
			if res := testkit.Recv(t, done, "the permission hook"); res.status != http.StatusOK {
				t.Fatalf("permission: %d %s", res.status, res.body)
			}
			status, raw = e.Do(http.MethodGet, "/v1/requests/"+waiting.ID, e.op, nil)
			var got api.Request
			if err := json.Unmarshal(raw, &got); status != http.StatusOK || err != nil || got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaMovedOn {
				t.Fatalf("the waiting item after the permission was decided: %d %s", status, raw)
			}
		})
	})
}
