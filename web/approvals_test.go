package web_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

func TestApprovalPolicyOverHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		alice := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "alice", Groups: []string{"release"}})
		bob := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "bob", Groups: []string{"release"}})
		dave := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "dave", Groups: []string{"sre", "release"}})
		carol := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "carol", Groups: []string{"sre"}})
		agent := e.NamedToken(store.NewToken{Role: models.RoleAgent, Name: "alices-agent", For: "alice"})
		runtime := e.NamedToken(store.NewToken{Role: models.RoleRuntime, Name: "alices-laptop", For: "alice"})
		policy := map[string]any{"groups": []string{"release"}, "required": 2, "note": "required"}

		decide := func(token, id string, version int, option, note string) (int, map[string]any) {
			t.Helper()
			body := map[string]any{"version": version, "decision": option}
			if note != "" {
				body["note"] = note
			}
			status, data := e.Do(http.MethodPost, "/v1/requests/"+id+"/decide", token, body)
			return status, webtest.JSON(t, data)
		}
		expect := func(t *testing.T, status int, body map[string]any, wantStatus int, wantCode string) {
			t.Helper()
			if status != wantStatus || body["error"] != wantCode || body["detail"] == "" {
				t.Fatalf("got %d %v, want %d %s", status, body, wantStatus, wantCode)
			}
		}
		unchanged := func(t *testing.T, id string, version int, votes int) {
			t.Helper()
			_, data := e.Do(http.MethodGet, "/v1/requests/"+id, bob, nil)
			r := webtest.JSON(t, data)
			a, _ := r["approvals"].(map[string]any)
			if int(r["version"].(float64)) != version || a == nil || len(a["votes"].([]any)) != votes || r["status"] != "open" {
				t.Fatalf("the request changed: %v", r)
			}
		}

		r := e.File(agent, map[string]any{"approvers": policy})
		id := r["id"].(string)

		t.Run("the record shows the policy with no votes yet", func(t *testing.T) {
			a, ok := r["approvals"].(map[string]any)
			if !ok || a["required"] != float64(2) || a["note"] != "required" || fmt.Sprint(a["groups"]) != "[release]" || len(a["votes"].([]any)) != 0 {
				t.Fatalf("approvals: %v", r["approvals"])
			}
			plain := e.File(agent, nil)
			if _, ok := plain["approvals"]; ok {
				t.Fatalf("a request without a policy shows approvals: %v", plain)
			}
		})

		t.Run("attackers are refused and change nothing", func(t *testing.T) {
			t.Run("the agent approving its own request", func(t *testing.T) {
				s, b := decide(agent, id, 1, "once", "mine")
				expect(t, s, b, 403, "forbidden")
				unchanged(t, id, 1, 0)
			})
			t.Run("the runtime acting for alice", func(t *testing.T) {
				s, b := decide(runtime, id, 1, "once", "mine")
				expect(t, s, b, 403, "forbidden")
				unchanged(t, id, 1, 0)
			})
			t.Run("alice, for whom the agent acts", func(t *testing.T) {
				s, b := decide(alice, id, 1, "once", "mine")
				expect(t, s, b, 403, "self_approval")
				unchanged(t, id, 1, 0)
			})
			t.Run("carol, who is not in release", func(t *testing.T) {
				s, b := decide(carol, id, 1, "once", "ok")
				expect(t, s, b, 403, "not_an_approver")
				unchanged(t, id, 1, 0)
			})
			t.Run("bob without the required note", func(t *testing.T) {
				s, b := decide(bob, id, 1, "once", "")
				expect(t, s, b, 422, "note_required")
				unchanged(t, id, 1, 0)
			})
			t.Run("bob on a stale version", func(t *testing.T) {
				s, b := decide(bob, id, 9, "once", "ok")
				expect(t, s, b, 409, "version_conflict")
				unchanged(t, id, 1, 0)
			})
		})

		t.Run("bob's vote leaves it open, a version higher, with his vote", func(t *testing.T) {
			s, b := decide(bob, id, 1, "once", "checked the diff")
			a, _ := b["approvals"].(map[string]any)
			if s != 200 || b["status"] != "open" || b["version"] != float64(2) || a == nil || len(a["votes"].([]any)) != 1 {
				t.Fatalf("bob's vote: %d %v", s, b)
			}
			v := a["votes"].([]any)[0].(map[string]any)
			if v["by"] != "operator:bob" || v["decision"] != "once" || v["note"] != "checked the diff" || v["at"] == "" {
				t.Fatalf("the vote: %v", v)
			}
		})

		t.Run("bob voting twice is already_voted", func(t *testing.T) {
			s, b := decide(bob, id, 2, "once", "again")
			expect(t, s, b, 409, "already_voted")
			unchanged(t, id, 2, 1)
		})

		t.Run("dave's vote resolves it, and the trail has both votes", func(t *testing.T) {
			s, b := decide(dave, id, 2, "once", "ship it")
			if s != 200 || b["status"] != "resolved" || b["decision"] != "once" || b["decided_by"] != "operator:dave" {
				t.Fatalf("dave's vote: %d %v", s, b)
			}
			_, data := e.Do(http.MethodGet, "/v1/requests/"+id+"/audit", bob, nil)
			votes := 0
			for _, en := range webtest.JSON(t, data)["entries"].([]any) {
				if en.(map[string]any)["action"] == "vote" {
					votes++
				}
			}
			if votes != 2 {
				t.Fatalf("%d vote entries in the audit trail, want 2: %s", votes, data)
			}
		})

		t.Run("a filer may not loosen nor invent a bad policy", func(t *testing.T) {
			status, data := e.Do(http.MethodPost, "/v1/requests", agent, map[string]any{"title": "x", "options": webtest.AllowDeny, "approvers": map[string]any{"required": 0}})
			if b := webtest.JSON(t, data); status != 400 || b["error"] != "invalid_input" {
				t.Fatalf("required 0: %d %s", status, data)
			}
		})
	})
}
