package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// allowShell files cmd from /repo n times and allows each over the API as
// the operator.
func (e *pageEnv) allowShell(cmd string, n int) {
	e.t.Helper()
	for range n {
		r := e.shell(cmd, "s1")
		if status, body := e.call("POST", "/v1/requests/"+r.ID+"/decide", e.opToken, map[string]any{"version": r.Version, "decision": "once"}); status != 200 {
			e.t.Fatalf("decide: %d %s", status, body)
		}
	}
}

// suggestionsFor lists the suggestions as token and answers the status and
// those whose grant matches match.
func (e *pageEnv) suggestionsFor(token, match string) (int, []api.Suggestion) {
	e.t.Helper()
	status, body := e.call("GET", "/v1/suggestions", token, nil)
	if status != 200 {
		return status, nil
	}
	var list api.SuggestionList
	if err := json.Unmarshal(body, &list); err != nil {
		e.t.Fatalf("%v: %s", err, body)
	}
	var out []api.Suggestion
	for _, g := range list.Suggestions {
		if g.Grant.Match == match {
			out = append(out, g)
		}
	}
	return status, out
}

// TestSuggestionsTrust is the operator's side of suggestions over the API and
// the page, and the agent trying to use them.
func TestSuggestionsTrust(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := startPage(t, dialect, func(s *store.Store) {
			rs, err := rules.ParseRules("rules.yaml", []byte("rules:\n  - name: lint\n    match: {tool: Bash, command: '^make lint$'}\n    action: approve\n"))
			if err != nil {
				t.Fatal(err)
			}
			s.Rules = rules.NewRuleSet(rs)
		})
		agentToken := e.agent.Token
		_, runtimeToken, err := e.store.CreateToken(context.Background(), models.RoleRuntime, "rt")
		if err != nil {
			t.Fatal(err)
		}

		t.Run("three allows propose the exact command, with the decisions it covers", func(t *testing.T) {
			e.allowShell("npm test", 2)
			if _, got := e.suggestionsFor(e.opToken, `^npm test$`); len(got) != 0 {
				t.Fatalf("proposed after two: %+v", got)
			}
			e.allowShell("npm test", 1)
			_, got := e.suggestionsFor(e.opToken, `^npm test$`)
			if len(got) != 1 || got[0].Decisions.Count != 3 || len(got[0].Decisions.IDs) != 3 || got[0].Grant.Scope != "project" ||
				got[0].Grant.Cwd != "/repo" || got[0].Grant.Filer != "agent:claude" || got[0].Grant.Rule != `match: {tool: 'Bash', command: '^npm test$'}` {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("an agent or runtime token can neither list nor answer suggestions", func(t *testing.T) {
			_, got := e.suggestionsFor(e.opToken, `^npm test$`)
			for _, tok := range []string{agentToken, runtimeToken} {
				if status, _ := e.suggestionsFor(tok, `^npm test$`); status != http.StatusForbidden {
					t.Fatalf("list: %d", status)
				}
				for _, verb := range []string{"accept", "dismiss"} {
					if status, body := e.call("POST", "/v1/suggestions/"+got[0].ID+"/"+verb, tok, nil); status != http.StatusForbidden {
						t.Fatalf("%s: %d %s", verb, status, body)
					}
				}
			}
			if status, _ := e.call("GET", "/v1/suggestions", "", nil); status != http.StatusUnauthorized {
				t.Fatalf("no token: %d", status)
			}
			if _, still := e.suggestionsFor(e.opToken, `^npm test$`); len(still) != 1 {
				t.Fatal("a refused call changed the suggestion")
			}
		})

		t.Run("an agent's filings a rule approved never make a suggestion", func(t *testing.T) {
			for range 4 {
				if r := e.shell("make lint", "s1"); r.Status != models.StatusResolved {
					t.Fatalf("the rule did not approve: %s", r.Status)
				}
			}
			if _, got := e.suggestionsFor(e.opToken, `^make lint$`); len(got) != 0 {
				t.Fatalf("proposed: %+v", got)
			}
		})

		t.Run("the page shows it with its count; one click with the CSRF token remembers it, and the next filing is remembered", func(t *testing.T) {
			b := e.browser()
			csrf := e.login(b)
			doc := e.get(b, "/", http.StatusOK)
			card := doc.Find(`[data-testid="suggestion"]`)
			if card.Length() != 1 || card.Find(`[data-testid="suggestion-count"]`).Text() != "3 times" ||
				card.Find(`[data-testid="suggestion-rule"]`).Text() != `match: {tool: 'Bash', command: '^npm test$'}` {
				t.Fatalf("the page shows %d suggestions: %q", card.Length(), card.Text())
			}
			id, _ := card.Attr("data-suggestion-id")
			if res := e.postForm(b, "/suggestions/"+id+"/accept", url.Values{"back": {"/"}, "for": {"1h"}}, nil); res.StatusCode != http.StatusForbidden {
				t.Fatalf("without the CSRF token: %d", res.StatusCode)
			}
			if len(e.remembered()) != 0 {
				t.Fatal("a grant was made without the CSRF token")
			}
			if res := e.postForm(b, "/suggestions/"+id+"/accept", url.Values{"csrf": {csrf}, "back": {"/"}, "for": {"1h"}}, nil); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("accept: %d", res.StatusCode)
			}
			gs := e.remembered()
			if len(gs) != 1 || gs[0].CreatedBy != "operator:ann" || gs[0].For != "1h" || gs[0].Scope != "project" || gs[0].Match != `^npm test$` {
				t.Fatalf("grants %+v", gs)
			}
			next := e.shell("npm test", "s9")
			if next.Status != models.StatusResolved || next.DecidedVia == nil || *next.DecidedVia != models.ViaRemembered || next.GrantID == nil || *next.GrantID != gs[0].ID {
				t.Fatalf("the next filing: %s via %v grant %v", next.Status, next.DecidedVia, next.GrantID)
			}
			if e.get(b, "/", http.StatusOK).Find(`[data-testid="suggestion"]`).Length() != 0 {
				t.Fatal("still shown once accepted")
			}
			status, body := e.call("GET", "/v1/audit?limit=1000", e.opToken, nil)
			if status != 200 || !strings.Contains(string(body), `"suggestion_id":"`+id+`"`) {
				t.Fatalf("the accept is not in the audit trail: %d", status)
			}
		})

		t.Run("dismissing is remembered, and a dismissed or accepted suggestion cannot be answered again", func(t *testing.T) {
			e.allowShell("make docs", 3)
			_, got := e.suggestionsFor(e.opToken, `^make docs$`)
			if len(got) != 1 {
				t.Fatalf("%+v", got)
			}
			id := got[0].ID
			for range 2 {
				status, body := e.call("POST", "/v1/suggestions/"+id+"/dismiss", e.opToken, nil)
				var d api.Suggestion
				if status != 200 || json.Unmarshal(body, &d) != nil || d.State != models.SuggestionDismissed || d.DecidedBy == nil || *d.DecidedBy != "operator:ann" {
					t.Fatalf("dismiss: %d %s", status, body)
				}
			}
			e.allowShell("make docs", 3)
			if _, again := e.suggestionsFor(e.opToken, `^make docs$`); len(again) != 0 {
				t.Fatal("a dismissed suggestion came back")
			}
			if status, body := e.call("POST", "/v1/suggestions/"+id+"/accept", e.opToken, nil); status != http.StatusConflict || !strings.Contains(string(body), `"conflict"`) {
				t.Fatalf("accept after dismiss: %d %s", status, body)
			}
			if status, _ := e.call("POST", "/v1/suggestions/sug_nope/accept", e.opToken, nil); status != http.StatusNotFound {
				t.Fatalf("unknown: %d", status)
			}
		})

		t.Run("a bad duration is refused and changes nothing", func(t *testing.T) {
			e.allowShell("make vet", 3)
			_, got := e.suggestionsFor(e.opToken, `^make vet$`)
			if len(got) != 1 {
				t.Fatalf("%+v", got)
			}
			for _, body := range []any{map[string]any{"for": "2y"}, map[string]any{"for": "1h", "scope": "runtime"}} {
				if status, b := e.call("POST", "/v1/suggestions/"+got[0].ID+"/accept", e.opToken, body); status != http.StatusBadRequest {
					t.Fatalf("%v: %d %s", body, status, b)
				}
			}
			if _, still := e.suggestionsFor(e.opToken, `^make vet$`); len(still) != 1 {
				t.Fatal("a refused accept changed the suggestion")
			}
			status, body := e.call("POST", "/v1/suggestions/"+got[0].ID+"/accept", e.opToken, map[string]any{"for": "until_revoked"})
			var acc api.SuggestionAccepted
			if status != 200 || json.Unmarshal(body, &acc) != nil || acc.Remembered.For != "until_revoked" || acc.Suggestion.Grant.For != "until_revoked" || acc.Remembered.ExpiresAt != nil ||
				acc.Suggestion.State != models.SuggestionAccepted || acc.Suggestion.GrantID == nil || *acc.Suggestion.GrantID != acc.Remembered.ID {
				t.Fatalf("accept: %d %s", status, body)
			}
		})
	})
}
