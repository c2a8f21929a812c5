package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestAvailabilityOverHTTP: an operator sets their own away and quiet hours;
// an agent or runtime, even one acting for that operator, sets nobody's.
func TestAvailabilityOverHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		alice := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "alice", Groups: []string{"release"}})
		agent := e.NamedToken(store.NewToken{Role: models.RoleAgent, Name: "alices-agent", For: "alice"})
		runtime := e.NamedToken(store.NewToken{Role: models.RoleRuntime, Name: "alices-laptop", For: "alice"})

		t.Run("the agent and the runtime are refused and change nothing", func(t *testing.T) {
			for _, tok := range []string{agent, runtime} {
				for _, c := range []struct {
					method, path string
					body         any
				}{
					{http.MethodPut, "/v1/me/away", map[string]any{"away": true}},
					{http.MethodPut, "/v1/me/quiet-hours", map[string]any{"start": "00:00", "end": "23:59", "tz": "UTC"}},
					{http.MethodDelete, "/v1/me/quiet-hours", nil},
					{http.MethodGet, "/v1/me/availability", nil},
				} {
					status, body := e.Do(c.method, c.path, tok, c.body)
					if status != http.StatusForbidden || webtest.JSON(t, body)["error"] != "forbidden" {
						t.Fatalf("%s %s: %d %s", c.method, c.path, status, body)
					}
				}
			}
			if a, _ := e.Store.GetAvailability(context.Background(), "alice"); a.Away || a.QuietStart != "" {
				t.Fatalf("alice's availability changed: %+v", a)
			}
		})

		t.Run("alice goes away until a time and comes back", func(t *testing.T) {
			until := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
			status, body := e.Do(http.MethodPut, "/v1/me/away", alice, map[string]any{"away": true, "until": until.Format(time.RFC3339)})
			got := webtest.JSON(t, body)
			if status != 200 || got["away"] != true || got["away_until"] != until.Format(time.RFC3339) || got["operator"] != "alice" {
				t.Fatalf("%d %v", status, got)
			}
			status, body = e.Do(http.MethodPut, "/v1/me/away", alice, map[string]any{"away": false})
			if got := webtest.JSON(t, body); status != 200 || got["away"] != false {
				t.Fatalf("%d %v", status, got)
			}
		})

		t.Run("bad input is refused", func(t *testing.T) {
			for _, c := range []struct {
				path string
				body any
			}{
				{"/v1/me/away", map[string]any{}},
				{"/v1/me/away", map[string]any{"away": true, "until": "2001-01-01T00:00:00Z"}},
				{"/v1/me/away", map[string]any{"away": false, "until": time.Now().Add(time.Hour).Format(time.RFC3339)}},
				{"/v1/me/away", map[string]any{"away": true, "who": "bob"}},
				{"/v1/me/quiet-hours", map[string]any{"start": "22:00", "end": "07:00", "tz": "Nowhere/Else"}},
				{"/v1/me/quiet-hours", map[string]any{"start": "22:00", "end": "22:00", "tz": "UTC"}},
			} {
				status, body := e.Do(http.MethodPut, c.path, alice, c.body)
				if code := webtest.JSON(t, body)["error"]; status != http.StatusBadRequest || (code != "invalid_input" && code != "invalid_json") {
					t.Fatalf("%s %v: %d %s", c.path, c.body, status, body)
				}
			}
		})

		t.Run("quiet hours across midnight in a time zone", func(t *testing.T) {
			status, body := e.Do(http.MethodPut, "/v1/me/quiet-hours", alice, map[string]any{"start": "22:00", "end": "07:00", "tz": "Europe/Berlin"})
			got := webtest.JSON(t, body)
			q, _ := got["quiet_hours"].(map[string]any)
			if status != 200 || q["start"] != "22:00" || q["end"] != "07:00" || q["tz"] != "Europe/Berlin" || got["away"] != false {
				t.Fatalf("%d %v", status, got)
			}
			status, body = e.Do(http.MethodDelete, "/v1/me/quiet-hours", alice, nil)
			if got := webtest.JSON(t, body); status != 200 || got["quiet_hours"] != nil {
				t.Fatalf("%d %v", status, got)
			}
		})
	})
}

// TestEscalationOverHTTP: the agent, with its own token, cannot get itself
// allowed by an escalation it writes: a `then: default` whose default allows
// halts instead, and the agent's wait answers a deny with the halt note.
func TestEscalationOverHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		st, changes := storetest.Store(t, dialect)
		var now atomic.Pointer[time.Time]
		t0 := time.Now().UTC().Truncate(time.Second)
		now.Store(&t0)
		st.Now = func() time.Time { return *now.Load() }
		e := webtest.NewOn(t, st, changes, web.Config{})
		e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "alice", Groups: []string{"release"}})
		agent := e.NamedToken(store.NewToken{Role: models.RoleAgent, Name: "claude"})

		status, body := e.Do(http.MethodPost, "/v1/requests", agent, map[string]any{
			"title": "deploy", "default_option": "once",
			"options":   []map[string]any{{"id": "once", "label": "Allow once", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}},
			"approvers": map[string]any{"groups": []string{"release"}, "required": 1, "escalate": []map[string]any{{"after": "1m", "then": "default"}}},
		})
		r := webtest.JSON(t, body)
		if status != http.StatusCreated {
			t.Fatalf("%d %v", status, r)
		}
		id := r["id"].(string)
		esc, _ := r["escalation"].(map[string]any)
		if esc == nil || esc["step"] != float64(0) || esc["next_at"] != t0.Add(time.Minute).Format(time.RFC3339) {
			t.Fatalf("escalation: %v", r["escalation"])
		}

		t.Run("the escalation's steps are refused when malformed", func(t *testing.T) {
			for _, steps := range []any{
				[]map[string]any{{"after": "30m", "then": "halt"}, {"after": "10m", "to": map[string]any{"groups": []string{"x"}}}},
				[]map[string]any{{"after": "10m", "then": "approve"}},
				[]map[string]any{{"after": "10m", "to": map[string]any{"groups": []string{"x"}}, "then": "halt"}},
				[]map[string]any{{"after": "10m", "to": map[string]any{"groups": []string{"x"}, "extra": 1}}},
			} {
				status, body := e.Do(http.MethodPost, "/v1/requests", agent, map[string]any{"title": "t",
					"options":   []map[string]any{{"id": "deny", "label": "Deny", "effect": "deny"}},
					"approvers": map[string]any{"required": 1, "escalate": steps}})
				if status != http.StatusBadRequest {
					t.Fatalf("%v: %d %s", steps, status, body)
				}
			}
		})

		t.Run("at its end the agent is answered a deny with the halt note", func(t *testing.T) {
			later := t0.Add(time.Minute)
			now.Store(&later)
			if _, _, err := st.Escalate(context.Background()); err != nil {
				t.Fatal(err)
			}
			status, body := e.Do(http.MethodGet, "/v1/requests/"+id+"/wait?timeout=5", agent, nil)
			w := webtest.JSON(t, body)
			if status != 200 || w["status"] != "resolved" || w["decision"] != "deny" || w["note"] != models.HaltNote ||
				w["decided_via"] != "escalation" || w["decided_digest"] != r["action_digest"] {
				t.Fatalf("%d %v", status, w)
			}
			fired := w["escalation"].(map[string]any)["fired"].([]any)
			if len(fired) != 1 || fired[0].(map[string]any)["then"] != "default" || fired[0].(map[string]any)["option"] != "deny" {
				t.Fatalf("fired: %v", fired)
			}
		})
	})
}

// TestEscalationOnThePage: the card says when a request escalated and to
// whom, and what comes next; the system page's away toggle marks the
// operator away and back.
func TestEscalationOnThePage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		var now atomic.Pointer[time.Time]
		t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
		now.Store(&t0)
		e := startPage(t, dialect, func(s *store.Store) {
			s.Now = func() time.Time { return *now.Load() }
			if _, _, err := s.CreateNamedToken(context.Background(), store.NewToken{Role: models.RoleOperator, Name: "alice", Groups: []string{"release"}}); err != nil {
				t.Fatal(err)
			}
		})
		r := e.file("Release 1.2", func(n *api.NewRequest) {
			hour := int64(3600)
			n.ExpiresIn = &hour
			n.Approvers = &api.Approvers{Groups: []string{"release"}, Required: 1, Escalate: []api.EscalationStep{
				{After: "5m", To: &api.EscalationTo{Groups: []string{"release-oncall"}}}, {After: "30m", Then: "halt"}}}
		})
		b := e.browser()
		csrf := e.login(b)

		t.Run("the card says what comes next", func(t *testing.T) {
			doc := e.get(b, "/requests/"+r.ID, http.StatusOK)
			if got := doc.Find(`[data-testid="card-escalation-next"]`).Text(); got != "Escalates to release-oncall at 14:05 UTC unless decided" {
				t.Fatalf("next line %q", got)
			}
		})

		t.Run("the card shows the escalation line", func(t *testing.T) {
			at := t0.Add(5 * time.Minute)
			now.Store(&at)
			if n, _, err := e.store.Escalate(context.Background()); n != 1 || err != nil {
				t.Fatalf("fired %d: %v", n, err)
			}
			doc := e.get(b, "/requests/"+r.ID, http.StatusOK)
			if got := doc.Find(`[data-testid="card-escalation"]`).Text(); got != "Escalated to release-oncall at 14:05 UTC" {
				t.Fatalf("escalation line %q", got)
			}
			if got := doc.Find(`[data-testid="card-escalation-next"]`).Text(); !strings.HasPrefix(got, "Halts at 14:30 UTC") {
				t.Fatalf("next line %q", got)
			}
		})

		t.Run("the away toggle marks ann away and back", func(t *testing.T) {
			doc := e.get(b, "/system", http.StatusOK)
			if got := doc.Find(`[data-testid="away-state"]`).Text(); !strings.Contains(got, "available") {
				t.Fatalf("state %q", got)
			}
			if v, _ := doc.Find(`[data-testid="away-form"] input[name="away"]`).Attr("value"); v != "on" {
				t.Fatalf("the toggle sends away=%q", v)
			}
			if res := e.postForm(b, "/me/away", url.Values{"away": {"on"}}, nil); res.StatusCode != http.StatusForbidden {
				t.Fatalf("without the CSRF token: %d", res.StatusCode)
			}
			res := e.postForm(b, "/me/away", url.Values{"away": {"on"}, "csrf": {csrf}}, nil)
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/system" {
				t.Fatalf("toggle: %d %s", res.StatusCode, res.Header.Get("Location"))
			}
			doc = e.get(b, "/system", http.StatusOK)
			if got := doc.Find(`[data-testid="away-state"]`).Text(); !strings.Contains(got, "You are away") {
				t.Fatalf("state %q", got)
			}
			if v, _ := doc.Find(`[data-testid="away-form"] input[name="away"]`).Attr("value"); v != "off" {
				t.Fatalf("the toggle sends away=%q", v)
			}
			if a, err := e.operator.Availability(context.Background()); err != nil || !a.Away || a.Operator != "ann" {
				t.Fatalf("%+v %v", a, err)
			}
			e.postForm(b, "/me/away", url.Values{"away": {"off"}, "csrf": {csrf}}, nil)
			if a, _ := e.operator.Availability(context.Background()); a.Away {
				t.Fatal("still away after the toggle")
			}
		})
	})
}
