package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestEscalationSweeper: the sweeper fires what fell due while none ran, and
// a filing it hears of arms it for that filing's first step, on the store's
// clock (the test moves the clock, never waits for it).
func TestEscalationSweeper(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		var clock atomic.Pointer[time.Time]
		start := time.Now().UTC().Truncate(time.Second)
		clock.Store(&start)
		s.Now = func() time.Time { return *clock.Load() }
		move := func(d time.Duration) { t := clock.Load().Add(d); clock.Store(&t) }
		voter(t, s, "alice", "release")
		voter(t, s, "bob", "release-oncall")
		p := agent(t, s, "a1")

		heard := store.NewChanges()
		swept := make(chan sweep, 16)
		sw := &store.EscalationSweeper{Store: s, Changes: heard,
			Swept: func(n int, next time.Time, err error) {
				if err != nil {
					t.Errorf("sweep: %v", err)
				}
				swept <- sweep{n, next}
			}}

		late := file(t, s, p, models.NewRequest{Approvers: onCall()})
		move(10 * time.Minute)
		runCtx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { sw.Run(runCtx); close(done) }()
		defer func() { cancel(); <-done }()

		t.Run("the first sweep fires what fell due while none ran", func(t *testing.T) {
			got := recv(t, swept)
			if got.n != 1 || !got.next.Equal(late.CreatedAt.Add(30*time.Minute)) {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("a filing arms it for its first step", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Approvers: onCall()})
			move(10 * time.Minute)
			heard.Announce(models.Change{RequestID: r.ID, Version: 1, Status: models.StatusOpen, Action: "create", Record: r})
			if got := recv(t, swept); got.n != 1 {
				t.Fatalf("%+v", got)
			}
			if got, _ := s.GetRequest(ctx, r.ID); got.EscalationStep != 1 {
				t.Fatalf("%+v", got)
			}
		})
	})
}
