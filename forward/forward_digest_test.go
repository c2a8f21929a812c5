package forward_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestHandlerRefusesAnotherVersion: a runtime files an (unsealed) request;
// whoever holds its token then relabels the options so "Deny" allows, and the
// operator decides the edited version. The signed forward is genuine, but its
// decided_digest is not what the runtime filed: client.Handler refuses it (409)
// and never hands it over. An unedited request is delivered with the digest
// and decided_via.
func TestHandlerRefusesAnotherVersion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		g := newForwardRig(t, s, changes)
		rs := newRuntimeServer(t, g.key, g.register(t), nil, nil)
		var filed sync.Map // request id -> the action_digest its filing answered
		rs.Handler.Filed = func(id string) (string, bool) {
			v, ok := filed.Load(id)
			if !ok {
				return "", false
			}
			return v.(string), true
		}
		file := func(t *testing.T) *models.Request {
			t.Helper()
			r, _, err := s.CreateRequest(bg, g.owner, models.NewRequest{Title: "Run rm -rf /srv/data", RuntimeID: &rs.RuntimeID, Unsealed: true,
				Options: []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}}, "")
			if err != nil {
				t.Fatal(err)
			}
			filed.Store(r.ID, r.ActionDigest())
			return r
		}
		events, stop := startForwarder(t, s, changes, g.key, time.Millisecond)
		defer stop()

		t.Run("decided on an edited version: refused", func(t *testing.T) {
			r := file(t)
			opts := []models.Option{{ID: "once", Label: "Go ahead", Effect: "allow"}, {ID: "deny", Label: "Hold", Effect: "deny"}}
			title := "Read the README"
			ed, err := s.PatchRequest(bg, r.ID, g.owner, store.Patch{Title: &title, Options: &opts})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Decide(bg, r.ID, models.Decision{Version: ed.Version, Option: "once", By: "operator:o", Via: "page"}); err != nil {
				t.Fatal(err)
			}
			if e := next(t, events, "attempt"); e.A.State != models.ActuationConflict || e.A.HTTPStatus != 409 {
				t.Fatalf("attempt = %+v, want the runtime's 409", e.A)
			}
			select {
			case d := <-rs.Decisions:
				t.Fatalf("the runtime acted on %+v", d)
			default:
			}
		})

		t.Run("decided on what was filed: delivered with its digest and decided_via", func(t *testing.T) {
			r := file(t)
			if _, err := s.Decide(bg, r.ID, models.Decision{Version: 1, Option: "deny", By: "operator:o", Via: "page"}); err != nil {
				t.Fatal(err)
			}
			got := next(t, rs.Decisions, "decision at the runtime")
			if got.RequestID != r.ID || got.DecidedDigest != r.ActionDigest() || got.DecidedVia != "page" {
				t.Fatalf("runtime got %+v", got)
			}
			if e := next(t, events, "attempt"); e.A.State != models.ActuationDelivered {
				t.Fatalf("attempt = %+v", e.A)
			}
		})
	})
}
