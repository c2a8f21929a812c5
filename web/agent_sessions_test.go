package web_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/api"
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
			ev := map[string]any{"session": session, "agent": "claude-code", "event": kind, "cwd": "/home/dev/proj", "message": msg}
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
