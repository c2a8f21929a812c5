package store_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// nextWatched returns the change handed to a WatchFunc watcher.
func nextWatched(t *testing.T, got <-chan models.Change, what string) models.Change {
	t.Helper()
	select {
	case ch := <-got:
		return ch
	case <-time.After(guard):
		t.Fatalf("%s: no change", what)
	}
	return models.Change{}
}

// sameRecord fails unless the carried record is the one read, field for field
// (times compared as instants: a driver may give another *time.Location).
func sameRecord(t *testing.T, carried, read *models.Request) {
	t.Helper()
	if carried == nil {
		t.Fatal("the change carries no record")
	}
	a, _ := json.Marshal(carried)
	b, _ := json.Marshal(read)
	if string(a) != string(b) {
		t.Fatalf("carried %s\nread    %s", a, b)
	}
}

func watchOnce(c *store.Changes, id string) (<-chan models.Change, func() bool) {
	got := make(chan models.Change, 1)
	return got, c.WatchFunc(id, func(ch models.Change) { got <- ch })
}

func TestChangeCarriesRecord(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		p := agent(t, s, "rec")

		t.Run("a decide's change carries the record as a read gives it", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{})
			got, stop := watchOnce(changes, r.ID)
			defer stop()
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
				t.Fatal(err)
			}
			ch := nextWatched(t, got, "decide")
			read, err := s.GetRequest(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			sameRecord(t, ch.Record, read)
		})

		t.Run("an edit's change carries the new version and text", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true})
			got, stop := watchOnce(changes, r.ID)
			defer stop()
			title := "edited"
			if _, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Title: &title}); err != nil {
				t.Fatal(err)
			}
			ch := nextWatched(t, got, "edit")
			read, _ := s.GetRequest(ctx, r.ID)
			sameRecord(t, ch.Record, read)
			if ch.Record.Version != 2 || ch.Record.Title != title {
				t.Fatalf("carried %+v", ch.Record)
			}
		})

		t.Run("an agent deciding its own request changes nothing and announces nothing", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{})
			got, stop := watchOnce(changes, r.ID)
			// The store takes any decider; the web layer refuses agents (403).
			// Here: a stale version from the agent is refused and nothing is announced.
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 7, Option: "once", By: p.Label(), Via: "api"}); models.ErrorCode(err) != models.ECodeVersionConflict {
				t.Fatalf("stale self-decide: %v", err)
			}
			if !stop() {
				t.Fatalf("a refused decide announced %+v", testkit.Recv(t, got, "the announcement"))
			}
		})
	})
}

func TestChangeEncodedOnce(t *testing.T) {
	c := store.NewChanges()
	const n = 5
	gots := make([]<-chan models.Change, n)
	for i := range gots {
		gots[i], _ = watchOnce(c, "req_enc")
	}
	c.Announce(models.Change{RequestID: "req_enc", Version: 2, Action: "decide", Record: &models.Request{ID: "req_enc", Version: 2}})
	calls := 0
	enc := func(r *models.Request) []byte { calls++; return []byte(r.ID) }
	for i, got := range gots {
		if b := nextWatched(t, got, "announce").Encoded(enc); string(b) != "req_enc" {
			t.Fatalf("waiter %d got %q", i, b)
		}
	}
	if calls != 1 {
		t.Fatalf("encoded %d times for %d waiters, want once", calls, n)
	}
	t.Run("a resync carries no record and no encoding", func(t *testing.T) {
		got, _ := watchOnce(c, "req_enc")
		c.Resync()
		if ch := nextWatched(t, got, "resync"); ch.Record != nil || ch.Encoded(enc) != nil {
			t.Fatalf("resync %+v", ch)
		}
	})
}

func TestNotifyCarriesRecordWhenItFits(t *testing.T) {
	url := storetest.URL(t, "postgres")
	db := storetest.Migrated(t, url)
	a := startReplica(t, url, db, nil)
	b := startReplica(t, url, db, nil)
	p := agent(t, a.store, "notify")
	for _, tc := range []struct {
		name    string
		detail  string
		carried bool
	}{
		{"a small record crosses replicas in the NOTIFY", "short", true},
		{"a record too big for a NOTIFY is left for the receiver to read", strings.Repeat("d", store.MaxNotifyPayload), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := b.changes.Subscribe(64)
			defer sub.Close()
			r := file(t, a.store, p, models.NewRequest{Detail: tc.detail})
			if _, err := a.store.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
				t.Fatal(err)
			}
			ch := nextChange(t, sub)
			for ch.RequestID != r.ID || ch.Action != "decide" {
				ch = nextChange(t, sub)
			}
			if ch.Version != 2 || ch.Status != models.StatusResolved || (ch.Record != nil) != tc.carried {
				t.Fatalf("change %+v (record carried: %v, want %v)", ch, ch.Record != nil, tc.carried)
			}
			if ch.Record != nil {
				read, _ := b.store.GetRequest(ctx, r.ID)
				sameRecord(t, ch.Record, read)
			}
		})
	}
}
