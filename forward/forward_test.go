package forward_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/forward"
	"github.com/gatehousehq/gatehouse/forward/forwardtest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

var bg = context.Background()

func next[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	return forwardtest.Next(t, ch, what)
}

var newRuntimeServer = forwardtest.NewRuntime

// startForwarder runs a forwarder with short backoffs; stop waits for it to end.
func startForwarder(t *testing.T, s *store.Store, changes *store.Changes, key *store.ServerKey, backoff time.Duration) (<-chan forwardtest.Attempt, func()) {
	t.Helper()
	events, attempted := forwardtest.Attempts()
	fw := &forward.Forwarder{Store: s, Changes: changes, Key: key, Now: s.Now, Backoff: backoff, MaxBackoff: 4 * backoff,
		Attempted: attempted}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan struct{})
	go func() { fw.Run(ctx); close(done) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return events, stop
}

type forwardRig struct {
	s       *store.Store
	changes *store.Changes
	key     *store.ServerKey
	owner   models.Principal
}

func newForwardRig(t *testing.T, s *store.Store, changes *store.Changes) *forwardRig {
	t.Helper()
	key, err := s.SigningKey(bg)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := s.CreateToken(bg, models.RoleRuntime, models.NewID("rt"))
	if err != nil {
		t.Fatal(err)
	}
	return &forwardRig{s: s, changes: changes, key: key, owner: tok.Principal()}
}

// register registers a new runtime at a callback and returns its id.
func (g *forwardRig) register(t *testing.T) func(callback string) string {
	return func(callback string) string {
		t.Helper()
		rt, _, err := g.s.RegisterRuntime(bg, g.owner, models.RuntimeInput{Name: models.NewID("n"), Machine: "m", CallbackURL: callback})
		if err != nil {
			t.Fatal(err)
		}
		return rt.ID
	}
}

// decided files a request for a runtime and decides it.
func (g *forwardRig) decided(t *testing.T, runtimeID string) *models.Request {
	t.Helper()
	r, _, err := g.s.CreateRequest(bg, g.owner, models.NewRequest{Title: "git push", RuntimeID: &runtimeID,
		Options: []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	note := "go ahead"
	r, err = g.s.Decide(bg, r.ID, models.Decision{Version: 1, Option: "once", Note: &note, By: "operator:o", Via: "api"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (g *forwardRig) actuation(t *testing.T, id string) (string, int) {
	t.Helper()
	r, err := g.s.GetRequest(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 2 {
		t.Fatalf("forwarding changed the version to %d", r.Version)
	}
	return r.ActuationState, r.Attempts
}

func forwardAudits(t *testing.T, s *store.Store, id string) int {
	t.Helper()
	trail, err := s.AuditTrail(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range trail {
		if a.Action == "forward" {
			n++
		}
	}
	return n
}

func TestForwarder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		g := newForwardRig(t, s, changes)

		t.Run("delivered", func(t *testing.T) {
			rs := newRuntimeServer(t, g.key, g.register(t), nil, nil)
			events, stop := startForwarder(t, s, changes, g.key, time.Millisecond)
			defer stop()
			r := g.decided(t, rs.RuntimeID)
			got := next(t, rs.Decisions, "decision at the runtime")
			if got.RequestID != r.ID || got.Version != 2 || *got.Decision != "once" || *got.Note != "go ahead" {
				t.Fatalf("runtime got %+v", got)
			}
			if e := next(t, events, "attempt"); e.A.State != models.ActuationDelivered || e.A.HTTPStatus != 200 {
				t.Fatalf("attempt = %+v", e.A)
			}
			if state, n := g.actuation(t, r.ID); state != models.ActuationDelivered || n != 1 {
				t.Fatalf("actuation = %s/%d", state, n)
			}
			if n := forwardAudits(t, s, r.ID); n != 1 {
				t.Fatalf("%d forward audit rows, want 1", n)
			}
		})

		t.Run("conflict", func(t *testing.T) {
			rs := newRuntimeServer(t, g.key, g.register(t), nil, func(context.Context, api.Decision) error { return client.ErrGone })
			events, stop := startForwarder(t, s, changes, g.key, time.Millisecond)
			defer stop()
			r := g.decided(t, rs.RuntimeID)
			if e := next(t, events, "attempt"); e.A.State != models.ActuationConflict || e.A.HTTPStatus != 409 {
				t.Fatalf("attempt = %+v", e.A)
			}
			if state, n := g.actuation(t, r.ID); state != models.ActuationConflict || n != 1 {
				t.Fatalf("actuation = %s/%d", state, n)
			}
		})

		t.Run("down, then up: retried, then delivered", func(t *testing.T) {
			rs := newRuntimeServer(t, g.key, g.register(t), func(n int, w http.ResponseWriter, r *http.Request) bool {
				switch n {
				case 1: // the connection drops: a network error
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return true
				case 2:
					w.WriteHeader(http.StatusServiceUnavailable)
					return true
				}
				return false
			}, nil)
			events, stop := startForwarder(t, s, changes, g.key, time.Millisecond)
			defer stop()
			r := g.decided(t, rs.RuntimeID)
			first, second, third := next(t, events, "attempt 1"), next(t, events, "attempt 2"), next(t, events, "attempt 3")
			if first.A.State != models.ActuationPending || first.A.HTTPStatus != 0 || first.A.Error == "" {
				t.Fatalf("attempt 1 = %+v, want a network error retried", first.A)
			}
			if second.A.State != models.ActuationPending || second.A.HTTPStatus != 503 {
				t.Fatalf("attempt 2 = %+v, want a 503 retried", second.A)
			}
			if third.A.State != models.ActuationDelivered {
				t.Fatalf("attempt 3 = %+v, want delivered", third.A)
			}
			if state, n := g.actuation(t, r.ID); state != models.ActuationDelivered || n != 3 {
				t.Fatalf("actuation = %s/%d", state, n)
			}
			if n := forwardAudits(t, s, r.ID); n != 3 {
				t.Fatalf("%d forward audit rows, want one per attempt", n)
			}
			rt, _ := s.GetRuntime(bg, *r.RuntimeID)
			if rt.Failures != 0 || rt.LastResult != models.ActuationDelivered {
				t.Fatalf("health = %d %q", rt.Failures, rt.LastResult)
			}
		})
	})
}

func TestForwarderGivesUpAtTheDeadline(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		base := time.Now().UTC()
		var offset atomic.Int64
		s.Now = func() time.Time { return base.Add(time.Duration(offset.Load())) }
		s.DefaultExpiry = time.Minute // the deadline is then the minimum retry window
		g := newForwardRig(t, s, changes)
		rs := newRuntimeServer(t, g.key, g.register(t), func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}, nil)
		// A long backoff: the retry after the first failure lands at the deadline.
		events, stop := startForwarder(t, s, changes, g.key, time.Hour)
		defer stop()
		r := g.decided(t, rs.RuntimeID)
		first := next(t, events, "attempt 1")
		if first.A.State != models.ActuationPending || !first.A.NextAt.Equal(first.F.Deadline) {
			t.Fatalf("attempt 1 = %+v, want a retry at the deadline %v", first.A, first.F.Deadline)
		}
		offset.Store(int64(store.MinForwardWindow + time.Minute))
		// The clock jumped past the deadline, but the forwarder's timer runs
		// on real time: a resync makes it look again and find the row due. (A
		// decision with no runtime does not wake it: it has nothing to send.
		// This test once decided one instead, and failed whenever the first
		// attempt's end was seen before the clock moved.)
		changes.Resync()
		if last := next(t, events, "attempt 2"); last.A.State != models.ActuationFailed {
			t.Fatalf("attempt 2 = %+v, want failed", last.A)
		}
		if state, n := g.actuation(t, r.ID); state != models.ActuationFailed || n != 2 {
			t.Fatalf("actuation = %s/%d", state, n)
		}
		rt, _ := s.GetRuntime(bg, *r.RuntimeID)
		if rt.Failures != 2 {
			t.Fatalf("consecutive failures = %d, want 2", rt.Failures)
		}
	})
}

func TestForwarderSurvivesRestart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		url := storetest.URL(t, dialect)
		open := func() *store.Store {
			db, err := store.OpenDB(url)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Migrate(db); err != nil {
				t.Fatal(err)
			}
			return store.NewStore(db, nil)
		}
		closeStore := func(s *store.Store) {
			if sqlDB, err := s.DB.DB(); err == nil {
				sqlDB.Close()
			}
		}

		changes1 := store.NewChanges()
		s1 := open()
		s1.Announcer = changes1
		g := newForwardRig(t, s1, changes1)
		inFlight := make(chan struct{})
		var called atomic.Bool
		rs := newRuntimeServer(t, g.key, g.register(t), nil, func(ctx context.Context, d api.Decision) error {
			if called.CompareAndSwap(false, true) {
				close(inFlight)
				<-ctx.Done() // the first server stops while this call is open
				return ctx.Err()
			}
			return nil
		})
		_, stop1 := startForwarder(t, s1, changes1, g.key, time.Millisecond)
		r := g.decided(t, rs.RuntimeID)
		next(t, (<-chan struct{})(inFlight), "first call at the runtime")
		stop1()
		f, err := s1.ForwardOf(bg, r.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		if f.State != models.ActuationPending || f.Attempts != 0 || f.ClaimedBy != "" {
			t.Fatalf("after stop: %+v; want pending, uncounted and unclaimed", f)
		}
		closeStore(s1)

		changes2 := store.NewChanges()
		s2 := open()
		s2.Announcer = changes2
		defer closeStore(s2)
		key2, err := s2.SigningKey(bg)
		if err != nil {
			t.Fatal(err)
		}
		if key2.ID != g.key.ID {
			t.Fatalf("the signing key changed across a restart: %s -> %s", g.key.ID, key2.ID)
		}
		events, stop2 := startForwarder(t, s2, changes2, key2, time.Millisecond)
		defer stop2()
		if e := next(t, events, "attempt after restart"); e.A.State != models.ActuationDelivered {
			t.Fatalf("after restart: %+v", e.A)
		}
		got := next(t, rs.Decisions, "decision at the runtime")
		if got.RequestID != r.ID || got.Version != 2 {
			t.Fatalf("runtime got %+v", got)
		}
		if state, n := (&forwardRig{s: s2}).actuation(t, r.ID); state != models.ActuationDelivered || n != 1 {
			t.Fatalf("actuation = %s/%d", state, n)
		}
	})
}
