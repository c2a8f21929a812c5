package web_test

import (
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/forward/forwardtest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestForwardThroughTheTestHelper files, decides and sees the decision arrive,
// signed, at the runtime's callback, with nothing but webtest.New: the helper
// runs the production assembly, forwarder included.
func TestForwardThroughTheTestHelper(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		rtok, op := e.Token(models.RoleRuntime, "laptop"), e.Token(models.RoleOperator, "alice")
		register := func(callback string) string {
			status, body := e.Do(http.MethodPost, "/v1/runtimes", rtok, map[string]string{"name": "laptop", "machine": "m1", "callback_url": callback})
			if status != http.StatusCreated && status != http.StatusOK {
				t.Fatalf("register: %d %s", status, body)
			}
			return webtest.JSON(t, body)["id"].(string)
		}
		rt := forwardtest.NewRuntime(t, e.App.Key, register, nil, nil)
		r := e.File(rtok, map[string]any{"runtime_id": rt.RuntimeID})
		id := r["id"].(string)

		t.Run("the runtime cannot approve its own request", func(t *testing.T) {
			status, body := e.Do(http.MethodPost, "/v1/requests/"+id+"/decide", rtok, map[string]any{"version": 1, "decision": "once"})
			if status != http.StatusForbidden {
				t.Fatalf("self-decide: %d %s", status, body)
			}
			if got, _ := e.Store.GetRequest(bg, id); got.Status != models.StatusOpen {
				t.Fatalf("the refused decide changed the request: %+v", got)
			}
			if _, err := e.Store.ForwardOf(bg, id, 2); models.ErrorCode(err) != models.ECodeNotFound {
				t.Fatalf("a refused decide wrote an outbox row: %v", err)
			}
		})

		t.Run("an operator's decision is delivered to the callback", func(t *testing.T) {
			status, body := e.Do(http.MethodPost, "/v1/requests/"+id+"/decide", op, map[string]any{"version": 1, "decision": "once", "note": "go"})
			if status != http.StatusOK {
				t.Fatalf("decide: %d %s", status, body)
			}
			d := forwardtest.Next(t, (<-chan api.Decision)(rt.Decisions), "the forward at the runtime")
			if d.RequestID != id || d.Version != 2 || d.Decision == nil || *d.Decision != "once" {
				t.Fatalf("delivered %+v", d)
			}
		})
	})
}
