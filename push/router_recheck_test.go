package push_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
	"gorm.io/gorm"
)

// guard bounds how long a test waits for a push before failing; it is a
// deadline for a hung test, not a speed assertion.
const guard = 30 * time.Second

func nextPush(t *testing.T, rg *rig) apnstest.Push {
	t.Helper()
	select {
	case p := <-rg.pushes:
		return p
	case <-time.After(guard):
		t.Fatal("no push")
	}
	return apnstest.Push{}
}

// waitEvent returns the next event named name, skipping others.
func waitEvent(t *testing.T, rg *rig, name string) push.Event {
	t.Helper()
	deadline := time.After(guard)
	for {
		select {
		case e := <-rg.events:
			if e.Name == name {
				return e
			}
		case <-deadline:
			t.Fatalf("no %s event", name)
		}
	}
}

// decideUnheard decides r through a store that announces nothing: the router
// never hears the close, as when another replica's NOTIFY is lost.
func (rg *rig) decideUnheard(t *testing.T, r *models.Request) {
	t.Helper()
	quiet := store.NewStore(rg.store.DB, nil)
	if _, err := quiet.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: "deny", By: "operator:ann", Via: "api"}); err != nil {
		t.Fatal(err)
	}
}

func wantClear(t *testing.T, p apnstest.Push, id string) {
	t.Helper()
	if p.PushType != "background" || p.CollapseID != id {
		t.Fatalf("want the clearing push of %s, got %+v %s", id, p, p.Body)
	}
}

func TestRecheck(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("a resync clears an alerted request whose close was never heard", func(t *testing.T) {
			rg := newRig(t, dialect, push.Config{Coalesce: -1, Grace: -1}, nil, nil)
			rg.device(t)
			r := rg.file(t, models.KindApproval)
			if p := nextPush(t, rg); p.PushType != "alert" {
				t.Fatalf("first push: %+v", p)
			}
			rg.decideUnheard(t, r)
			rg.store.Announcer.(*store.Changes).Resync()
			wantClear(t, nextPush(t, rg), r.ID)
		})

		t.Run("a lagged subscription rechecks what was alerted", func(t *testing.T) {
			armed := atomic.Bool{}
			blocked, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			hold := func(e push.Event) { // stalls the planning goroutine once, when armed
				if e.Name == "batched" && armed.Load() {
					once.Do(func() { close(blocked); <-release })
				}
			}
			rg := newRig(t, dialect, push.Config{Coalesce: -1, Grace: -1, Workers: 1, Observe: hold}, nil, nil)
			rg.device(t)
			r := rg.file(t, models.KindApproval)
			if p := nextPush(t, rg); p.PushType != "alert" {
				t.Fatalf("first push: %+v", p)
			}
			armed.Store(true)
			m := rg.file(t, models.KindApproval)
			<-blocked
			rg.decideUnheard(t, r)
			changes := rg.store.Announcer.(*store.Changes)
			for range 1100 { // more than the router's buffer of 1024: it is dropped
				changes.Announce(models.Change{RequestID: "noise", Action: "noise"})
			}
			close(release)
			if p := nextPush(t, rg); p.PushType != "alert" || p.CollapseID != m.ID {
				t.Fatalf("the held alert: %+v", p)
			}
			wantClear(t, nextPush(t, rg), r.ID)
		})

		t.Run("an alerted request is forgotten after the longest expiry", func(t *testing.T) {
			var mu sync.Mutex
			now := time.Now()
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			rg := newRig(t, dialect, push.Config{Coalesce: -1, Grace: -1, Forget: time.Hour, Now: clock}, nil, nil)
			rg.device(t)
			old := rg.file(t, models.KindApproval)
			nextPush(t, rg)
			mu.Lock()
			now = now.Add(2 * time.Hour)
			mu.Unlock()
			rg.file(t, models.KindApproval) // its flush prunes
			nextPush(t, rg)
			if e := waitEvent(t, rg, "forgotten"); e.RequestID != old.ID {
				t.Fatalf("forgot %s, want %s", e.RequestID, old.ID)
			}
		})
	})
}

// countQueries counts, while on, the statements that read requests by id and
// that claim pushes.
func countQueries(db *gorm.DB) (on *atomic.Bool, reads, claims *atomic.Int64) {
	on, reads, claims = &atomic.Bool{}, &atomic.Int64{}, &atomic.Int64{}
	count := func(tx *gorm.DB) {
		if !on.Load() {
			return
		}
		sql := strings.ToLower(tx.Statement.SQL.String())
		switch {
		case strings.Contains(sql, "push_claims"):
			claims.Add(1)
		case strings.Contains(sql, "from `requests`") || strings.Contains(sql, `from "requests"`):
			if !strings.Contains(sql, "count(") {
				reads.Add(1)
			}
		}
	}
	cb := db.Callback()
	_ = cb.Query().After("gorm:query").Register("test:count", count)
	_ = cb.Create().After("gorm:create").Register("test:count", count)
	_ = cb.Raw().After("gorm:raw").Register("test:count", count)
	_ = cb.Row().After("gorm:row").Register("test:count", count)
	return on, reads, claims
}

func TestFlushQueries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		clock := newClock()
		rg := newRig(t, dialect, push.Config{AfterFunc: clock.AfterFunc, Grace: -1}, nil, nil)
		rg.device(t)
		on, reads, claims := countQueries(rg.store.DB)

		t.Run("a burst of requests costs one read and one claim", func(t *testing.T) {
			var ids []string
			for range 5 {
				ids = append(ids, rg.file(t, models.KindApproval).ID)
			}
			window := clock.next(t)
			for range ids {
				rg.wait(t, "batched")
			}
			on.Store(true)
			window.fire()
			p := nextPush(t, rg)
			on.Store(false)
			if got, _ := p.Payload["request_ids"].([]any); p.PushType != "alert" || len(got) != len(ids) {
				t.Fatalf("alert: %+v %s", p, p.Body)
			}
			if reads.Load() != 1 || claims.Load() != 1 {
				t.Fatalf("%d reads and %d claims for a burst of %d", reads.Load(), claims.Load(), len(ids))
			}
		})

		t.Run("a second claim of the same pushes wins none", func(t *testing.T) {
			r := rg.file(t, models.KindApproval)
			won, err := rg.store.ClaimPushes(ctx, []string{r.ID, r.ID + "x"}, push.TypeClear)
			if err != nil || len(won) != 2 {
				t.Fatalf("first claim: %v %v", won, err)
			}
			won, err = rg.store.ClaimPushes(ctx, []string{r.ID, r.ID + "x", r.ID + "y"}, push.TypeClear)
			if err != nil || len(won) != 1 || won[0] != r.ID+"y" {
				t.Fatalf("second claim: %v %v", won, err)
			}
		})
	})
}
