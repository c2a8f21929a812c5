package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func TestSweeper(t *testing.T) {
	t.Run("a new request is swept at its expiry, with no look before", func(t *testing.T) {
		s, changes := storetest.Store(t, "sqlite")
		p := agent(t, s, "a1")
		settled, end := runSweeper(t, s, changes)
		defer end()
		testkit.Recv(t, settled, "the first look, at start") // nothing open: it sleeps MaxSleep
		later := file(t, s, p, models.NewRequest{ExpiresIn: time.Hour})
		due := file(t, s, p, models.NewRequest{ExpiresIn: 200 * time.Millisecond})
		// The next sweep is the one at due's expiry: neither filing made it look
		// before (the later one expires after the timer, the due one is timed).
		if n := testkit.Recv(t, settled, "the sweep at the expiry"); n != 1 {
			t.Fatalf("the first sweep after the filings settled %d, want the due one alone", n)
		}
		for id, want := range map[string]string{due.ID: models.StatusExpired, later.ID: models.StatusOpen} {
			if r, err := s.GetRequest(ctx, id); err != nil || r.Status != want {
				t.Fatalf("%s: %v %v, want %s", id, r, err, want)
			}
		}
	})
	t.Run("a steady stream of filings does not postpone an expiry", func(t *testing.T) {
		s, changes := storetest.Store(t, "sqlite")
		p := agent(t, s, "a1")
		due := file(t, s, p, models.NewRequest{ExpiresIn: 300 * time.Millisecond})
		settled, end := runSweeper(t, s, changes)
		defer end()
		testkit.Recv(t, settled, "settled") // the first look, at start: nothing is due yet

		// File a request every 10 ms (the load), until the due one is settled.
		stop := make(chan struct{})
		filed := make(chan struct{})
		go func() {
			defer close(filed)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					n := models.NewRequest{Title: "load", Options: allowDeny()}
					if _, _, err := s.CreateRequest(ctx, p, n, ""); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
		defer func() { close(stop); <-filed }()
		limit := time.After(10 * time.Second) // a cap so a regression fails instead of hanging
		for {
			select {
			case n := <-settled:
				if n == 0 {
					continue
				}
				r, _ := s.GetRequest(ctx, due.ID)
				if r.Status != models.StatusExpired {
					t.Fatalf("settled %d but the due request is %s", n, r.Status)
				}
				return
			case <-limit:
				t.Fatal("the sweeper never ran while filings kept coming")
			}
		}
	})
}

// runSweeper runs a sweeper on s until end, which waits for it to stop; each
// sweep's count of settled requests arrives on settled.
func runSweeper(t *testing.T, s *store.Store, changes store.Subscriber) (settled <-chan int, end func()) {
	t.Helper()
	c := make(chan int, 1000)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	sw := &store.Sweeper{Store: s, Changes: changes, Settled: func(n int) { c <- n }}
	go func() { sw.Run(sctx); close(done) }()
	return c, func() { cancel(); testkit.Recv(t, done, "the sweeper to stop") }
}
