package forward_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/forward"
	"github.com/gatehousehq/gatehouse/forward/forwardtest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// A runtime with 24 forwards to a callback that never answers must not delay
// another runtime's forward: the healthy one is delivered while the hanging
// calls are still open (issue 15, finding 3).
func TestForwarderFairAcrossRuntimes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		g := newForwardRig(t, s, changes)
		release := make(chan struct{})
		arrived := make(chan struct{}, 64)
		hanging := newRuntimeServer(t, g.key, g.register(t), func(_ int, w http.ResponseWriter, r *http.Request) bool {
			arrived <- struct{}{}
			select { // hangs until the test ends (no client timeout below)
			case <-release:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}, nil)
		var once sync.Once
		unhang := func() { once.Do(func() { close(release) }) }
		t.Cleanup(unhang) // before the servers close (cleanups run last-first)
		for range 24 {
			g.decided(t, hanging.RuntimeID)
		}
		healthy := newRuntimeServer(t, g.key, g.register(t), nil, nil)

		events, attempted := forwardtest.Attempts()
		fw := &forward.Forwarder{Store: s, Changes: changes, Key: g.key, Now: s.Now, HTTP: &http.Client{},
			Attempted: attempted}
		ctx, cancel := context.WithCancel(bg)
		done := make(chan struct{})
		go func() { fw.Run(ctx); close(done) }()
		t.Cleanup(func() { unhang(); cancel(); next(t, (<-chan struct{})(done), "forwarder stop") })

		next(t, (<-chan struct{})(arrived), "a call at the hanging runtime")
		r := g.decided(t, healthy.RuntimeID)
		if got := next(t, healthy.Decisions, "the healthy runtime's decision"); got.RequestID != r.ID {
			t.Fatalf("healthy runtime got %+v", got)
		}
		if e := next(t, events, "the healthy attempt"); e.F.RuntimeID != healthy.RuntimeID || e.A.State != models.ActuationDelivered {
			t.Fatalf("first recorded attempt = %+v for %s; want the healthy runtime's, delivered", e.A, e.F.RuntimeID)
		}
		if n := hanging.Calls.Load(); n < 1 || n > 2 {
			t.Fatalf("%d calls open at the hanging runtime; want at most its share of 2", n)
		}
	})
}
