package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// guard bounds how long a test waits for an event before failing; it is a
// deadline for a hung test, not a speed assertion.
const guard = 30 * time.Second

// replica is one process's view: its own Changes, store and listen connection,
// all on one shared database.
type replica struct {
	store   *store.Store
	changes *store.Changes
	ann     *store.PGAnnouncer
}

func startReplica(t *testing.T, url string, db *gorm.DB, connect func(context.Context) (*pgx.Conn, error)) *replica {
	t.Helper()
	changes := store.NewChanges()
	ann := store.NewPGAnnouncer(url, db, changes)
	ann.ReconnectDelay = 10 * time.Millisecond
	if connect != nil {
		ann.Connect = connect
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ann.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitClosed(t, ann.Listening(), "first LISTEN")
	return &replica{store: store.NewStore(db, ann), changes: changes, ann: ann}
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(guard):
		t.Fatalf("%s: never happened", what)
	}
}

func nextChange(t *testing.T, sub *store.Subscription) models.Change {
	t.Helper()
	select {
	case ch, ok := <-sub.C:
		if !ok {
			t.Fatal("subscription dropped")
		}
		return ch
	case <-time.After(guard):
		t.Fatal("no change announced")
	}
	return models.Change{}
}

// skipResyncs returns the next change that is not a resync (the first LISTEN
// announces one).
func skipResyncs(t *testing.T, sub *store.Subscription) models.Change {
	t.Helper()
	for {
		if ch := nextChange(t, sub); ch.Action != models.ActionResync {
			return ch
		}
	}
}

func TestPGAnnouncer(t *testing.T) {
	url := storetest.URL(t, "postgres")
	db := storetest.Migrated(t, url)

	t.Run("a change reaches every replica, and its own once", func(t *testing.T) {
		a := startReplica(t, url, db, nil)
		b := startReplica(t, url, db, nil)
		subA, subB := a.changes.Subscribe(16), b.changes.Subscribe(16)
		defer subA.Close()
		defer subB.Close()
		r := file(t, a.store, agent(t, a.store, "x1"), models.NewRequest{})
		watch, stop := b.changes.Watch(r.ID)
		defer stop()

		for name, sub := range map[string]*store.Subscription{"own": subA, "other": subB} {
			if ch := skipResyncs(t, sub); ch.RequestID != r.ID || ch.Action != "create" || ch.Version != 1 || ch.Status != models.StatusOpen {
				t.Fatalf("%s replica got %+v, want the create of %s", name, ch, r.ID)
			}
		}
		if _, err := a.store.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, watch, "the other replica's watcher woken")
		// The next change on each replica is the decide: a second copy of the
		// create (local delivery plus NOTIFY) would come first.
		for name, sub := range map[string]*store.Subscription{"own": subA, "other": subB} {
			if ch := nextChange(t, sub); ch.RequestID != r.ID || ch.Action != "decide" || ch.Version != 2 {
				t.Fatalf("%s replica got %+v, want the decide of %s", name, ch, r.ID)
			}
		}
	})

	t.Run("the committing transaction announces: a NOTIFY cannot fail apart from its commit", func(t *testing.T) {
		a := startReplica(t, url, db, nil)
		b := startReplica(t, url, db, nil)
		// The announcer's own pool is gone: a NOTIFY sent after the commit, on
		// its own, fails and reaches this process only.
		broken, err := store.OpenDB(url)
		if err != nil {
			t.Fatal(err)
		}
		if sqlDB, err := broken.DB(); err != nil || sqlDB.Close() != nil {
			t.Fatal("close the pool", err)
		}
		a.ann.DB = broken
		subB := b.changes.Subscribe(16)
		defer subB.Close()
		r := file(t, a.store, agent(t, a.store, "x3"), models.NewRequest{})
		if ch := skipResyncs(t, subB); ch.RequestID != r.ID || ch.Action != "create" {
			t.Fatalf("the other replica got %+v, want the create of %s", ch, r.ID)
		}
		watch, stop := b.changes.Watch(r.ID)
		defer stop()
		if _, err := a.store.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, watch, "the other replica's waiter woken")
	})

	t.Run("a change made while the listen connection is down is not missed", func(t *testing.T) {
		pids := make(chan uint32, 1)
		redial := make(chan struct{}, 1)
		gate := make(chan struct{})
		dials := 0
		connect := func(ctx context.Context) (*pgx.Conn, error) {
			dials++ // the listener dials from one goroutine
			if dials > 1 {
				redial <- struct{}{}
				select {
				case <-gate: // hold the reconnect until the test has made its change
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			c, err := pgx.Connect(ctx, url)
			if err == nil && dials == 1 {
				pids <- c.PgConn().PID()
			}
			return c, err
		}
		a := startReplica(t, url, db, connect)
		b := startReplica(t, url, db, nil)
		sub := a.changes.Subscribe(16)
		defer sub.Close()
		r := file(t, b.store, agent(t, b.store, "x2"), models.NewRequest{})
		if ch := skipResyncs(t, sub); ch.RequestID != r.ID || ch.Action != "create" {
			t.Fatalf("got %+v, want the create of %s", ch, r.ID)
		}
		watch, stop := a.changes.Watch(r.ID)
		defer stop()

		var killed bool
		if err := db.Raw("SELECT pg_terminate_backend(?)", testkit.Recv(t, pids, "the listen connection's pid")).Scan(&killed).Error; err != nil || !killed {
			t.Fatalf("terminate the listen connection: %v %v", killed, err)
		}
		select {
		case <-redial: // the old connection is gone; a NOTIFY now reaches nobody on a
		case <-time.After(guard):
			t.Fatal("the listener never noticed its connection died")
		}
		if _, err := b.store.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "deny", By: "operator:o", Via: "api"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-watch:
			t.Fatal("the watcher woke while the listener was down: the test proves nothing")
		default:
		}
		close(gate)

		waitClosed(t, watch, "the watcher woken by the resync")
		for {
			ch := nextChange(t, sub)
			if ch.Action == models.ActionResync {
				break
			}
			if ch.RequestID == r.ID && ch.Action == "decide" {
				t.Fatalf("got %+v: the notification sent during the gap was delivered after all", ch)
			}
		}
		got, err := a.store.GetRequest(ctx, r.ID)
		if err != nil || got.Status != models.StatusResolved || got.Version != 2 {
			t.Fatalf("re-read after resync: %+v %v", got, err)
		}
	})
}

// A decision's runtime id travels in the NOTIFY payload, so a feed waiting on
// another replica wakes for it.
func TestPGAnnouncerCarriesRuntime(t *testing.T) {
	url := storetest.URL(t, "postgres")
	db := storetest.Migrated(t, url)
	a := startReplica(t, url, db, nil)
	b := startReplica(t, url, db, nil)
	p := runtimeToken(t, a.store, "r")
	rt := register(t, a.store, p, "laptop", "")
	r, _, err := a.store.CreateRequest(ctx, p, models.NewRequest{Title: "git push", RuntimeID: &rt.ID,
		Options: []models.Option{{ID: "once", Label: "Allow once"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	w, stop := b.changes.Watch(models.RuntimeKey(rt.ID))
	defer stop()
	if _, err := a.store.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, w, "the other replica's runtime feed woken")
}
