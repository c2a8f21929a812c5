package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

const webRules = `rules:
  - name: git-read
    match:
      tool: Bash
      command: '^git status'
    action: approve
  - name: hold-deploys
    match:
      text: deploy
    action: hold
    window: 90s
    then: deny
`

type rulesServer struct {
	url         string
	agent, oper string
	store       *store.Store
}

func newRulesServer(t *testing.T, dialect, src string) *rulesServer {
	t.Helper()
	st, changes := storetest.Store(t, dialect)
	rs, err := rules.ParseRules("rules.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	st.Rules = rules.NewRuleSet(rs)
	env := webtest.NewOn(t, st, changes, web.Config{})
	_, agent, err := st.CreateToken(context.Background(), models.RoleAgent, "a1")
	if err != nil {
		t.Fatal(err)
	}
	_, oper, err := st.CreateToken(context.Background(), models.RoleOperator, "o1")
	if err != nil {
		t.Fatal(err)
	}
	return &rulesServer{url: env.URL, agent: agent, oper: oper, store: st}
}

func call(t *testing.T, method, url, token, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	return resp.StatusCode
}

type record struct {
	ID         string  `json:"id"`
	Status     string  `json:"status"`
	Version    int     `json:"version"`
	Decision   *string `json:"decision"`
	DecidedBy  *string `json:"decided_by"`
	DecidedVia *string `json:"decided_via"`
	Hold       *struct {
		Rule  string `json:"rule"`
		Until string `json:"until"`
		Then  string `json:"then"`
	} `json:"hold"`
}

func TestRulesOverHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s := newRulesServer(t, dialect, webRules)
		opts := `"options":[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]`

		t.Run("an approve rule answers the filing with the decision", func(t *testing.T) {
			var r record
			code := call(t, "POST", s.url+"/v1/requests", s.agent, `{"title":"git","tool":"Bash","command":"git status",`+opts+`}`, &r)
			if code != http.StatusCreated || r.Status != "resolved" || *r.Decision != "once" || *r.DecidedVia != "rule:git-read" || r.Version != 2 || r.Hold != nil {
				t.Fatalf("%d %+v", code, r)
			}
		})

		t.Run("a held request shows its hold", func(t *testing.T) {
			var r record
			code := call(t, "POST", s.url+"/v1/requests", s.agent, `{"title":"deploy web",`+opts+`}`, &r)
			if code != http.StatusCreated || r.Status != "open" || r.Hold == nil || r.Hold.Rule != "hold-deploys" || r.Hold.Then != "deny" || r.Hold.Until == "" {
				t.Fatalf("%d %+v", code, r)
			}
		})

		t.Run("nothing matches: the operator decides", func(t *testing.T) {
			var r record
			code := call(t, "POST", s.url+"/v1/requests", s.agent, `{"title":"rm","tool":"Bash","command":"rm -rf /",`+opts+`}`, &r)
			if code != http.StatusCreated || r.Status != "open" || r.DecidedVia != nil || r.Hold != nil {
				t.Fatalf("%d %+v", code, r)
			}
		})

		t.Run("GET /v1/rules shows the rules in force to the operator only", func(t *testing.T) {
			var out struct {
				File   string `json:"file"`
				Digest string `json:"digest"`
				Rules  []struct {
					Name          string `json:"name"`
					Line          int    `json:"line"`
					Action        string `json:"action"`
					WindowSeconds int    `json:"window_seconds"`
					Then          string `json:"then"`
					Summary       string `json:"summary"`
					Match         struct {
						Tool    []string `json:"tool"`
						Command string   `json:"command"`
					} `json:"match"`
				} `json:"rules"`
			}
			if code := call(t, "GET", s.url+"/v1/rules", s.oper, "", &out); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			if len(out.Rules) != 2 || out.Rules[0].Name != "git-read" || out.Rules[0].Match.Tool[0] != "Bash" || out.Rules[0].Match.Command != "^git status" ||
				out.Rules[1].Action != "hold" || out.Rules[1].WindowSeconds != 90 || out.Rules[1].Then != "deny" || out.Rules[1].Line != 7 || out.Digest == "" ||
				out.Rules[1].Summary != "text /deploy/ → hold for 1m30s, then deny" {
				t.Fatalf("%+v", out)
			}
			if code := call(t, "GET", s.url+"/v1/rules", s.agent, "", nil); code != http.StatusForbidden {
				t.Fatalf("agent got %d", code)
			}
		})
	})

	t.Run("no rules: an empty list", func(t *testing.T) {
		s := newRulesServer(t, "sqlite", "")
		var out struct {
			Rules []any `json:"rules"`
		}
		if code := call(t, "GET", s.url+"/v1/rules", s.oper, "", &out); code != http.StatusOK || out.Rules == nil || len(out.Rules) != 0 {
			t.Fatalf("%d %+v", code, out)
		}
	})
}

// TestRulesJudgeEditsOverHTTP: the reviewer's repro. A PATCH cannot turn "hold,
// then deny" into an allow, and a PATCH into a deny rule is denied at once
// (with the server's decision hooks).
func TestRulesJudgeEditsOverHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s := newRulesServer(t, dialect, `rules:
  - name: no-drop
    match: {text: drop}
    action: deny
  - name: risky
    match: {text: deploy}
    action: hold
    window: 1s
    then: deny
`)
		type rec struct {
			ID         string  `json:"id"`
			Status     string  `json:"status"`
			Decision   *string `json:"decision"`
			DecidedVia *string `json:"decided_via"`
			Hold       *struct {
				Then string `json:"then"`
			} `json:"hold"`
		}
		var r rec
		if code := call(t, "POST", s.url+"/v1/requests", s.agent, `{"title": "deploy prod", "sealed": false, "options": [{"id": "once", "label": "Allow", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}]}`, &r); code != http.StatusCreated || r.Hold == nil || r.Hold.Then != "deny" {
			t.Fatalf("file: %d %+v", code, r)
		}
		var refused struct{ Error string }
		edit := `{"title": "harmless", "options": [{"id": "deny", "label": "Go ahead", "effect": "allow"}]}`
		if code := call(t, "PATCH", s.url+"/v1/requests/"+r.ID, s.agent, edit, &refused); code != http.StatusBadRequest || refused.Error != "misleading_option" {
			t.Fatalf("patch of deny into an allow: %d %+v", code, refused)
		}
		// Ids that read as neither effect may be turned around; the hold lapses.
		if code := call(t, "POST", s.url+"/v1/requests", s.agent, `{"title": "deploy prod", "sealed": false, "options": [{"id": "go", "label": "Go", "effect": "allow"}, {"id": "hold", "label": "Hold", "effect": "deny"}]}`, &r); code != http.StatusCreated || r.Hold == nil || r.Hold.Then != "hold" {
			t.Fatalf("file: %d %+v", code, r)
		}
		var got rec
		edit = `{"title": "harmless", "options": [{"id": "hold", "label": "Go ahead", "effect": "allow"}]}`
		if code := call(t, "PATCH", s.url+"/v1/requests/"+r.ID, s.agent, edit, &got); code != http.StatusOK || got.Hold != nil || got.Status != "open" {
			t.Fatalf("patch: %d %+v", code, got)
		}

		if code := call(t, "POST", s.url+"/v1/requests", s.agent, `{"title": "hello", "sealed": false, "options": [{"id": "once", "label": "Allow", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}], "default_option": "deny"}`, &r); code != http.StatusCreated || r.Status != "open" {
			t.Fatalf("file: %d %+v", code, r)
		}
		if code := call(t, "PATCH", s.url+"/v1/requests/"+r.ID, s.agent, `{"title": "drop the table", "default_option": "once"}`, &got); code != http.StatusOK ||
			got.Status != "resolved" || *got.Decision != "deny" || *got.DecidedVia != "rule:no-drop" {
			t.Fatalf("patch into a deny rule: %d %+v", code, got)
		}
	})
}
