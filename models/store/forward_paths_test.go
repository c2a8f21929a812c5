package store_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// pathRules decide at filing, on an edit, and when a hold's window ends.
const pathRules = `rules:
  - name: auto-yes
    match:
      text: autoyes
    action: approve
  - name: auto-no
    match:
      text: autono
    action: deny
  - name: wait-deploy
    match:
      text: deploy
    action: hold
    window: 2m
    then: approve
`

// TestOutboxOnEveryPath proves the store writes the forward outbox row on every
// way a request can be decided, with nothing passed in by the caller.
func TestOutboxOnEveryPath(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _, clock := ruledStore(t, dialect, pathRules)
		p := runtimeToken(t, s, "r1")
		rt := register(t, s, p, "laptop", "http://127.0.0.1:9")
		forwarded := func(t *testing.T, r *models.Request, decision string) {
			t.Helper()
			if r.Status != models.StatusResolved || r.ActuationState != models.ActuationPending {
				t.Fatalf("returned: status %q actuation %q", r.Status, r.ActuationState)
			}
			f, err := s.ForwardOf(ctx, r.ID, r.Version)
			if err != nil {
				t.Fatalf("no outbox row for %s v%d: %v", r.ID, r.Version, err)
			}
			if f.RuntimeID != rt.ID || *f.Decision != decision {
				t.Fatalf("forward = %+v", f)
			}
		}

		t.Run("Decide", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{RuntimeID: &rt.ID})
			got, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"})
			if err != nil {
				t.Fatal(err)
			}
			forwarded(t, got, "once")
		})

		t.Run("a rule at filing (CreateRequest)", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "autoyes please", RuntimeID: &rt.ID})
			forwarded(t, r, "once")
		})

		// An edit never leads to approve, but a deny rule still decides it.
		t.Run("a rule on an edit (PatchRequest)", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "plain", RuntimeID: &rt.ID, Unsealed: true})
			title := "autono now"
			got, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Title: &title})
			if err != nil {
				t.Fatal(err)
			}
			forwarded(t, got, "deny")
		})

		t.Run("a hold's window (ReleaseHolds)", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "deploy", RuntimeID: &rt.ID})
			*clock = clock.Add(3 * time.Minute)
			if n, _, err := s.ReleaseHolds(ctx); err != nil || n != 1 {
				t.Fatalf("released %d: %v", n, err)
			}
			got, err := s.GetRequest(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			forwarded(t, got, "once")
		})

		t.Run("expiry with a default (Expire)", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{RuntimeID: &rt.ID, DefaultOption: "deny", ExpiresIn: time.Second})
			*clock = clock.Add(2 * time.Second)
			if n, _, err := s.Expire(ctx); err != nil || n != 1 {
				t.Fatalf("expired %d: %v", n, err)
			}
			got, err := s.GetRequest(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			forwarded(t, got, "deny")
		})
	})
}
