package push_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
)

// countingStore is the real store, counting the router's single-record reads.
type countingStore struct {
	*store.Store
	reads atomic.Int64
}

func (s *countingStore) GetRequest(ctx context.Context, id string) (*models.Request, error) {
	s.reads.Add(1)
	return s.Store.GetRequest(ctx, id)
}

// TestRouterUsesAnnouncedRecord: a filing's announcement carries the
// committed record, so the router plans its alert without reading it again;
// an announcement without one (a record too big for a NOTIFY) is read.
func TestRouterUsesAnnouncedRecord(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		st, changes := storetest.Store(t, dialect)
		counting := &countingStore{Store: st}
		events := make(chan push.Event, 100)
		clock := newClock()
		r := push.NewRouter(push.Config{BaseURL: base, AfterFunc: clock.AfterFunc, Observe: func(e push.Event) { events <- e }},
			counting, changes, push.Senders{}, nil)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(runCtx) }()
		t.Cleanup(func() { cancel(); testkit.Recv(t, done, "the router to stop") })
		tok, _, err := st.CreateToken(ctx, models.RoleAgent, "a1")
		if err != nil {
			t.Fatal(err)
		}
		newReq := models.NewRequest{Kind: models.KindPermission, Title: "t",
			Options: []models.Option{{ID: "once", Label: "Once", Effect: "allow"}}}
		batched := func(t *testing.T, id string) {
			t.Helper()
			for {
				if e := testkit.Recv(t, events, "the alert to be batched"); e.Name == "batched" && e.RequestID == id {
					return
				}
			}
		}

		t.Run("an announced record is not read again", func(t *testing.T) {
			req, _, err := st.CreateRequest(ctx, tok.Principal(), newReq, "")
			if err != nil {
				t.Fatal(err)
			}
			batched(t, req.ID)
			if n := counting.reads.Load(); n != 0 {
				t.Fatalf("the router read %d records, want 0", n)
			}
		})

		t.Run("an announcement without its record is read", func(t *testing.T) {
			quiet := store.NewStore(st.DB, nil) // files without announcing
			req, _, err := quiet.CreateRequest(ctx, tok.Principal(), newReq, "")
			if err != nil {
				t.Fatal(err)
			}
			changes.Announce(models.Change{RequestID: req.ID, Version: req.Version, Status: req.Status, Action: "create"})
			batched(t, req.ID)
			if n := counting.reads.Load(); n != 1 {
				t.Fatalf("the router read %d records, want 1", n)
			}
		})
	})
}
