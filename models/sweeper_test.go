package models_test

import (
	"context"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/modelstest"
)

func TestSweeper(t *testing.T) {
	t.Run("a steady stream of filings does not postpone an expiry", func(t *testing.T) {
		s, changes := modelstest.Store(t, "sqlite")
		p := agent(t, s, "a1")
		due := file(t, s, p, models.NewRequest{ExpiresIn: 300 * time.Millisecond})
		settled := make(chan int, 1000)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		sw := &models.Sweeper{Store: s, Changes: changes, Settled: func(n int) { settled <- n }}
		go func() { sw.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
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
