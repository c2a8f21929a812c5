package store_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"gorm.io/gorm"
)

// preparing is the store's announcer with a look inside Prepare: it reads
// the request on a connection of its own, so it sees what is committed.
type preparing struct {
	*store.Changes
	other    *gorm.DB
	enc      func(*models.Request) []byte
	prepared chan string // the status committed when Prepare ran
}

func (p preparing) Prepare(ch models.Change) {
	var status string
	p.other.Raw("SELECT status FROM requests WHERE id = ?", ch.RequestID).Scan(&status)
	ch.Encoded(p.enc)
	p.prepared <- status
	p.Changes.Prepare(ch)
}

func TestWarmAnswer(t *testing.T) {
	url := storetest.URL(t, "sqlite")
	changes := store.NewChanges()
	s := store.NewStore(storetest.Migrated(t, url), changes)
	var encodings atomic.Int32
	enc := func(r *models.Request) []byte { encodings.Add(1); return []byte(r.Status) }
	a := preparing{Changes: changes, other: storetest.Open(t, url), enc: enc, prepared: make(chan string, 4)}
	s.Announcer = a
	p := agent(t, s, "warm")

	t.Run("a decision is prepared before its commit, and announced with the answer made then", func(t *testing.T) {
		r := file(t, s, p, models.NewRequest{})
		if got := <-a.prepared; got != "" {
			t.Fatalf("the filing was prepared after its commit: a reader saw it %q", got)
		}
		encodings.Store(0)
		got, stop := watchOnce(changes, r.ID)
		defer stop()
		if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
			t.Fatal(err)
		}
		if st := <-a.prepared; st != models.StatusOpen {
			t.Fatalf("prepared when a reader saw %q; want it before the commit (open)", st)
		}
		ch := nextWatched(t, got, "decide")
		if b := ch.Encoded(enc); string(b) != models.StatusResolved || encodings.Load() != 1 {
			t.Fatalf("the waiter's answer %q was encoded %d times; want %q, once (in Prepare)", b, encodings.Load(), models.StatusResolved)
		}
	})

	t.Run("the warmer runs for a change someone waits on", func(t *testing.T) {
		warmed := make(chan models.Change, 1)
		changes.WarmWith(func(ch models.Change) { warmed <- ch })
		defer changes.WarmWith(nil)
		_, stop := watchOnce(changes, "req_w")
		defer stop()
		changes.Prepare(models.Change{RequestID: "req_w", Record: &models.Request{ID: "req_w"}})
		select {
		case ch := <-warmed:
			if ch.RequestID != "req_w" {
				t.Fatalf("warmed %s", ch.RequestID)
			}
		case <-time.After(guard):
			t.Fatal("not warmed")
		}
	})
}

// TestWaitersBeforeSubscribers: an announcement answers its waiters before
// it wakes the subscribers, whose goroutines would otherwise take the CPU
// the waiter's answer needs.
func TestWaitersBeforeSubscribers(t *testing.T) {
	changes := store.NewChanges()
	sub := changes.Subscribe(4)
	defer sub.Close()
	queued := -1
	changes.WatchFunc("req_1", func(models.Change) { queued = len(sub.C) })
	changes.Announce(models.Change{RequestID: "req_1", Action: "decide"})
	if queued != 0 {
		t.Fatalf("the waiter ran with %d changes already queued to a subscriber; want 0", queued)
	}
	if len(sub.C) != 1 {
		t.Fatalf("the subscriber holds %d changes; want 1", len(sub.C))
	}
}
