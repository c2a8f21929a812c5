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

// TestSessionsAPI: an operator lists page sessions and ends one, whose cookie
// is refused on its next call (the cache too); agents and runtimes can do
// neither, and no answer carries a cookie secret or its hash.
func TestSessionsAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		op := e.Token(models.RoleOperator, "op")
		agent := e.Token(models.RoleAgent, "a1")
		rt := e.Token(models.RoleRuntime, "rt")

		// Log in through the form, as a browser does, with its user agent.
		jar := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/login", strings.NewReader("token="+op))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("User-Agent", "TestBrowser/1.0")
		resp, err := jar.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var cookie *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == web.SessionCookie {
				cookie = c
			}
		}
		if cookie == nil {
			t.Fatalf("login: %d, no session cookie", resp.StatusCode)
		}
		page := func() int {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, e.URL+"/v1/rules", nil)
			req.AddCookie(cookie)
			resp, err := jar.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if got := page(); got != http.StatusOK {
			t.Fatalf("the session's call: %d", got)
		}

		status, body := e.Do(http.MethodGet, "/v1/sessions", op, nil)
		if status != http.StatusOK {
			t.Fatalf("list: %d %s", status, body)
		}
		if strings.Contains(string(body), cookie.Value) || strings.Contains(string(body), models.HashSecret(cookie.Value)) {
			t.Fatalf("the list shows the secret or its hash: %s", body)
		}
		var list struct {
			Sessions []struct {
				ID, Operator, UserAgent string
			} `json:"sessions"`
		}
		_ = json.Unmarshal(body, &list)
		if len(list.Sessions) != 1 || list.Sessions[0].Operator != "op" {
			t.Fatalf("listed %s", body)
		}
		var ua struct {
			Sessions []struct {
				UserAgent string `json:"user_agent"`
			} `json:"sessions"`
		}
		_ = json.Unmarshal(body, &ua)
		if ua.Sessions[0].UserAgent != "TestBrowser/1.0" {
			t.Fatalf("user agent: %s", body)
		}
		id := list.Sessions[0].ID

		t.Run("agents and runtimes cannot list or end sessions", func(t *testing.T) {
			for _, tok := range []string{agent, rt} {
				if s, b := e.Do(http.MethodGet, "/v1/sessions", tok, nil); s != http.StatusForbidden {
					t.Fatalf("list: %d %s", s, b)
				}
				if s, b := e.Do(http.MethodDelete, "/v1/sessions/"+id, tok, nil); s != http.StatusForbidden {
					t.Fatalf("end: %d %s", s, b)
				}
			}
			if got := page(); got != http.StatusOK {
				t.Fatalf("the session died: %d", got)
			}
		})

		t.Run("an unknown id is 404 and ends nothing", func(t *testing.T) {
			if s, b := e.Do(http.MethodDelete, "/v1/sessions/ses_nope", op, nil); s != http.StatusNotFound || !strings.Contains(string(b), "not_found") {
				t.Fatalf("end unknown: %d %s", s, b)
			}
			if got := page(); got != http.StatusOK {
				t.Fatalf("the session died: %d", got)
			}
		})

		t.Run("an ended session's cookie is refused at once", func(t *testing.T) {
			if s, b := e.Do(http.MethodDelete, "/v1/sessions/"+id, op, nil); s != http.StatusNoContent {
				t.Fatalf("end: %d %s", s, b)
			}
			if got := page(); got != http.StatusUnauthorized {
				t.Fatalf("the ended session's call: %d, want 401", got)
			}
			if _, err := e.Store.SessionFor(context.Background(), cookie.Value); models.ErrorCode(err) != models.ECodeUnauthenticated {
				t.Fatalf("store: %v", err)
			}
		})

		t.Run("the end is in the audit chain with who ended it", func(t *testing.T) {
			chains, err := e.Store.AuditChainCount(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for c := range chains {
				entries, err := e.Store.AuditEntries(context.Background(), uint32(c), 0, 100000)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range entries {
					var d map[string]any
					if a.Action == store.ActionSessionRevoke && a.Actor == "operator:op" && a.Via == models.ViaAPI &&
						json.Unmarshal([]byte(a.Detail), &d) == nil && d["session_id"] == id && d["operator"] == "op" {
						n++
					}
				}
			}
			if n != 1 {
				t.Fatalf("%d session_revoke entries by operator:op", n)
			}
		})
	})
}
