package web_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestSealedRequests is the agent's attack with its own token on what its hook
// filed: swap the words, relabel the options so "Deny" allows. A sealed
// request refuses it and keeps what the operator is shown.
func TestSealedRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ag, op := e.Token(models.RoleAgent, "a"), e.Token(models.RoleOperator, "op")
		relabel := map[string]any{
			"title": "Read the README", "detail": "harmless",
			"options": []map[string]any{{"id": "once", "label": "Deny", "effect": "allow"}, {"id": "deny", "label": "Allow", "effect": "deny"}},
		}

		t.Run("a filing is sealed unless it says otherwise", func(t *testing.T) {
			r := e.File(ag, map[string]any{"title": "Run rm -rf ~"})
			if r["sealed"] != true || r["edited_at"] != nil {
				t.Fatalf("%v", r)
			}
			u := e.File(ag, map[string]any{"title": "Run rm -rf ~", "sealed": false})
			if u["sealed"] != false {
				t.Fatalf("%v", u)
			}
		})

		t.Run("the owner's PATCH of a sealed request is 409 sealed and changes nothing", func(t *testing.T) {
			r := e.File(ag, map[string]any{"title": "Run rm -rf ~"})
			id := r["id"].(string)
			status, body := e.Do(http.MethodPatch, "/v1/requests/"+id, ag, relabel)
			var eb api.ErrorBody
			decode(t, body, &eb)
			if status != http.StatusConflict || eb.Code != "sealed" || eb.Request == nil || eb.Request.Title != "Run rm -rf ~" {
				t.Fatalf("%d %s", status, body)
			}
			_, body = e.Do(http.MethodGet, "/v1/requests/"+id, op, nil)
			var now api.Request
			decode(t, body, &now)
			if now.Version != 1 || now.Title != "Run rm -rf ~" || now.Options[0].Label != "Allow once" || now.ActionDigest != r["action_digest"] {
				t.Fatalf("changed: %+v", now)
			}
		})

		t.Run("an unsealed edit is marked, moves the digest, and the decision is bound to the edited version", func(t *testing.T) {
			r := e.File(ag, map[string]any{"title": "Run rm -rf ~", "sealed": false})
			id, filed := r["id"].(string), r["action_digest"].(string)
			// "Deny" on an allow is refused whether sealed or not.
			status, body := e.Do(http.MethodPatch, "/v1/requests/"+id, ag, relabel)
			var eb api.ErrorBody
			decode(t, body, &eb)
			if status != http.StatusBadRequest || eb.Code != "misleading_option" {
				t.Fatalf("%d %s", status, body)
			}
			reword := map[string]any{"title": "Read the README", "detail": "harmless",
				"options": []map[string]any{{"id": "once", "label": "Go ahead", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}}}
			status, body = e.Do(http.MethodPatch, "/v1/requests/"+id, ag, reword)
			var edited api.Request
			decode(t, body, &edited)
			if status != http.StatusOK || edited.EditedAt == nil || edited.ActionDigest == filed || len(edited.ActionDigest) != 64 {
				t.Fatalf("%d %s", status, body)
			}
			status, body = e.Do(http.MethodPost, "/v1/requests/"+id+"/decide", op, map[string]any{"version": edited.Version, "decision": "deny"})
			var got api.Request
			decode(t, body, &got)
			if status != http.StatusOK || got.DecidedDigest == nil || *got.DecidedDigest != edited.ActionDigest {
				t.Fatalf("%d %s", status, body)
			}
			// What the filer answered at filing is not what was decided: no decision for it.
			if got.DecidedOn(filed) || !got.DecidedOn(edited.ActionDigest) {
				t.Fatalf("DecidedOn: %+v", got)
			}
		})
	})
}

func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
}
