package web_test

import (
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestCancelReason: a filer that withdraws its request may say why (a bridge:
// "decided in the editor"); the record keeps it as its note and the audit
// entry shows it. Without a body, cancel is as before.
func TestCancelReason(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ag, op := e.Token(models.RoleAgent, "a"), e.Token(models.RoleOperator, "op")

		t.Run("the reason is the record's note and in the audit entry", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			status, body := e.Do(http.MethodPost, "/v1/requests/"+id+"/cancel", ag, map[string]any{"reason": "decided in the editor: allow_once"})
			var r api.Request
			decode(t, body, &r)
			if status != http.StatusOK || r.Status != "cancelled" || r.Note == nil || *r.Note != "decided in the editor: allow_once" {
				t.Fatalf("%d %s", status, body)
			}
			_, body = e.Do(http.MethodGet, "/v1/requests/"+id+"/audit", op, nil)
			var page api.AuditPage
			decode(t, body, &page)
			last := page.Entries[len(page.Entries)-1]
			var detail map[string]any
			decode(t, last.Detail, &detail)
			if last.Action != "cancel" || detail["reason"] != "decided in the editor: allow_once" {
				t.Fatalf("audit %+v", last)
			}
		})

		t.Run("no body and an empty object cancel without a note", func(t *testing.T) {
			for _, b := range []any{nil, map[string]any{}} {
				id := e.File(ag, nil)["id"].(string)
				status, body := e.Do(http.MethodPost, "/v1/requests/"+id+"/cancel", ag, b)
				var r api.Request
				decode(t, body, &r)
				if status != http.StatusOK || r.Status != "cancelled" || r.Note != nil {
					t.Fatalf("%v: %d %s", b, status, body)
				}
			}
		})

		t.Run("a bad reason or an unknown member is 400 and cancels nothing", func(t *testing.T) {
			for _, b := range []map[string]any{{"reason": "ok\u202e"}, {"reson": "x"}, {"reason": string(make([]byte, models.MaxNote+1))}} {
				id := e.File(ag, nil)["id"].(string)
				if status, body := e.Do(http.MethodPost, "/v1/requests/"+id+"/cancel", ag, b); status != http.StatusBadRequest {
					t.Fatalf("%v: %d %s", b, status, body)
				}
				_, body := e.Do(http.MethodGet, "/v1/requests/"+id, op, nil)
				var r api.Request
				decode(t, body, &r)
				if r.Status != "open" {
					t.Fatalf("%v: %s", b, r.Status)
				}
			}
		})
	})
}
