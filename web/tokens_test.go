package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// tokenAudit answers the chain's token entries, oldest first.
func tokenAudit(t *testing.T, s *store.Store) []store.AuditEntry {
	t.Helper()
	rows, err := s.AuditEntries(context.Background(), 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.AuditEntry
	for _, r := range rows {
		if strings.HasPrefix(r.Action, "token_") {
			out = append(out, r.Entry())
		}
	}
	return out
}

// TestTokensAPI: an operator administers tokens over HTTP, so no one needs the
// database file on a machine that runs agents; agents and runtimes can do
// none of it, each change is audited with who made it, and the secret is
// answered once and never listed.
func TestTokensAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		op := e.Token(models.RoleOperator, "op")
		agent := e.Token(models.RoleAgent, "a1")
		rt := e.Token(models.RoleRuntime, "rt")
		routes := []struct {
			method, path string
			body         any
		}{
			{http.MethodPost, "/v1/tokens", map[string]any{"role": "operator", "name": "mallory"}},
			{http.MethodGet, "/v1/tokens", nil},
			{http.MethodDelete, "/v1/tokens/op", nil},
		}

		t.Run("agents and runtimes are refused every route, and mint nothing", func(t *testing.T) {
			for _, r := range routes {
				for _, tok := range []string{agent, rt} {
					status, body := e.Do(r.method, r.path, tok, r.body)
					if status != http.StatusForbidden || webtest.JSON(t, body)["error"] != "forbidden" {
						t.Fatalf("%s %s as a filer: %d %s, want 403 forbidden", r.method, r.path, status, body)
					}
				}
				if status, _ := e.Do(r.method, r.path, "", r.body); status != http.StatusUnauthorized {
					t.Fatalf("%s %s without a token: %d, want 401", r.method, r.path, status)
				}
			}
			ts, err := e.Store.ListTokens(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range ts {
				if x.Name == "mallory" || x.RevokedAt != nil {
					t.Fatalf("a refused call changed the tokens: %+v", x)
				}
			}
		})

		var created struct {
			ID, Role, Name, For, Token string
			Groups                     []string
		}
		t.Run("the operator creates an agent token that works, shown once", func(t *testing.T) {
			status, body := e.Do(http.MethodPost, "/v1/tokens", op, map[string]any{"role": "agent", "name": "deploy-bot", "for": "op"})
			if status != http.StatusCreated {
				t.Fatalf("create: %d %s", status, body)
			}
			if err := json.Unmarshal(body, &created); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(created.Token, "gh_") || created.Role != "agent" || created.Name != "deploy-bot" || created.For != "op" || created.ID == "" {
				t.Fatalf("created %s", body)
			}
			if status, body := e.Do(http.MethodPost, "/v1/requests", created.Token,
				map[string]any{"title": "Deploy", "options": webtest.AllowDeny}); status != http.StatusCreated {
				t.Fatalf("the new token cannot file: %d %s", status, body)
			}
			status, body = e.Do(http.MethodGet, "/v1/tokens", op, nil)
			if status != http.StatusOK || !strings.Contains(string(body), created.ID) || strings.Contains(string(body), created.Token) ||
				strings.Contains(string(body), models.HashSecret(created.Token)) {
				t.Fatalf("list: %d %s", status, body)
			}
		})

		t.Run("a second live token of the same role and name, or a bad role, is refused", func(t *testing.T) {
			if status, body := e.Do(http.MethodPost, "/v1/tokens", op, map[string]any{"role": "agent", "name": "deploy-bot"}); status != http.StatusConflict {
				t.Fatalf("same name again: %d %s, want 409", status, body)
			}
			if status, body := e.Do(http.MethodPost, "/v1/tokens", op, map[string]any{"role": "root", "name": "x"}); status != http.StatusBadRequest {
				t.Fatalf("bad role: %d %s, want 400", status, body)
			}
		})

		t.Run("the operator revokes it by name and it stops working", func(t *testing.T) {
			status, body := e.Do(http.MethodDelete, "/v1/tokens/deploy-bot", op, nil)
			if status != http.StatusOK || webtest.JSON(t, body)["revoked"] != float64(1) {
				t.Fatalf("revoke: %d %s", status, body)
			}
			if status, _ := e.Do(http.MethodGet, "/v1/requests", created.Token, nil); status != http.StatusUnauthorized {
				t.Fatalf("a revoked token answered %d, want 401", status)
			}
			if status, _ := e.Do(http.MethodDelete, "/v1/tokens/deploy-bot", op, nil); status != http.StatusNotFound {
				t.Fatalf("revoking again: %d, want 404", status)
			}
		})

		t.Run("each change is in the audit chain with the operator who made it, never the secret", func(t *testing.T) {
			got := tokenAudit(t, e.Store)
			if len(got) != 2 {
				t.Fatalf("%d token entries, want 2: %+v", len(got), got)
			}
			for i, want := range []string{store.ActionTokenCreate, store.ActionTokenRevoke} {
				a := got[i]
				var d map[string]any
				_ = json.Unmarshal(a.Detail, &d)
				if a.Action != want || a.Actor != "operator:op" || a.Via != models.ViaAPI || d["token_id"] != created.ID || d["name"] != "deploy-bot" {
					t.Fatalf("entry %d: %+v %s", i, a, a.Detail)
				}
				if strings.Contains(string(a.Detail), created.Token) || strings.Contains(string(a.Detail), models.HashSecret(created.Token)) {
					t.Fatalf("the secret is in the trail: %s", a.Detail)
				}
			}
			if _, err := e.Store.VerifyAudit(context.Background(), nil); err != nil {
				t.Fatalf("the chain with token entries does not verify: %v", err)
			}
		})
	})
}
