package main_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestKillUnderLoad: every filing and decision the server answered 2xx is
// there after `kill -9` of the server in the middle of concurrent writes (on
// SQLite, writers sharing group commits), at several points of the load. It
// shows no 2xx is sent before the COMMIT it reports; power loss itself is the
// fsync's part (synchronous=FULL; docs/durability.md).
func TestKillUnderLoad(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		database := storetest.URL(t, dialect)
		bin := gatehousetest.Build(t)
		opToken := gatehousetest.Token(t, bin, database, "operator", "ops")
		agentToken := gatehousetest.Token(t, bin, database, "agent", "builder")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()

		var mu sync.Mutex
		filed := map[string]bool{}   // answered 201
		decided := map[string]bool{} // answered 200 to the decide
		for round, killAfter := range []int{25, 60, 120} {
			// One agent token files as fast as it can here: lift the per-token
			// filing limit, which is not what this test is about.
			srv := gatehousetest.Start(t, bin, database, "--filing-rate", "1000000", "--filing-burst", "1000000")
			agent, op := srv.Client(agentToken), srv.Client(opToken)
			acks := make(chan struct{}, 1024)
			var writers sync.WaitGroup
			for range 8 {
				writers.Go(func() {
					for ctx.Err() == nil {
						r, err := agent.File(ctx, api.NewRequest{Title: "survive", Options: []api.Option{
							{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}}, "")
						if err != nil {
							return // the server died
						}
						mu.Lock()
						filed[r.ID] = true
						mu.Unlock()
						if _, err := op.Decide(ctx, r.ID, r.Version, "once", ""); err != nil {
							return
						}
						mu.Lock()
						decided[r.ID] = true
						mu.Unlock()
						select {
						case acks <- struct{}{}:
						default:
						}
					}
				})
			}
			for n := 0; n < killAfter; n++ {
				select {
				case <-acks:
				case <-time.After(time.Minute):
					t.Fatalf("round %d: only %d decisions in a minute", round, n)
				}
			}
			srv.Kill() // writes are in flight: SIGKILL, no shutdown
			writers.Wait()
		}

		srv := gatehousetest.Start(t, bin, database)
		reader := srv.Client(opToken)
		mu.Lock()
		defer mu.Unlock()
		for id := range filed {
			r, err := reader.Get(ctx, id)
			if err != nil {
				t.Errorf("filing %s was answered 201 and is gone after kill -9: %v", id, err)
				continue
			}
			if decided[id] && (r.Status != "resolved" || r.Decision == nil || *r.Decision != "once") {
				t.Errorf("decision on %s was answered 200 and is lost after kill -9: status %s", id, r.Status)
			}
		}
		t.Logf("%s: %d filings and %d decisions acknowledged across 3 kills, all present", dialect, len(filed), len(decided))
	})
}
