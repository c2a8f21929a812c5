package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/forward/forwardtest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

var bg = context.Background()

func next[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	return forwardtest.Next(t, ch, what)
}

// apiRig is the whole service through the ordinary test helper (the
// production assembly), with its forwarder's attempts reported on attempts.
type apiRig struct {
	s        *store.Store
	changes  *store.Changes
	key      *store.ServerKey
	url      string
	attempts <-chan forwardtest.Attempt
}

// newAPI serves the whole API on a real HTTP server, wired as serve wires it.
func newAPI(t *testing.T, dialect string) *apiRig {
	t.Helper()
	return newAPIConfig(t, dialect, web.Config{})
}

// newAPIConfig is newAPI with server settings (test hooks).
func newAPIConfig(t *testing.T, dialect string, cfg web.Config) *apiRig {
	t.Helper()
	events, attempted := forwardtest.Attempts()
	e := webtest.NewApp(t, app.Config{Database: storetest.URL(t, dialect), Web: cfg, Forward: app.ForwardConfig{
		Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond,
		Attempted: attempted,
	}})
	return &apiRig{s: e.Store, changes: e.Changes, key: e.App.Key, url: e.URL, attempts: events}
}

func (g *apiRig) as(t *testing.T, role string) *client.Client {
	t.Helper()
	_, secret, err := g.s.CreateToken(bg, role, models.NewID(role))
	if err != nil {
		t.Fatal(err)
	}
	return client.New(g.url, secret)
}

func allowDeny() []api.Option {
	return []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
}

func status(err error) int {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func TestRuntimeRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		g := newAPI(t, dialect)
		op, rt1, rt2, ag := g.as(t, models.RoleOperator), g.as(t, models.RoleRuntime), g.as(t, models.RoleRuntime), g.as(t, models.RoleAgent)

		t.Run("the public key is served to anyone", func(t *testing.T) {
			keys, err := client.New(g.url, "").Keys(bg)
			if err != nil {
				t.Fatal(err)
			}
			if !ed25519.PublicKey(g.key.Public).Equal(keys[g.key.ID]) {
				t.Fatalf("keys = %v, want %s: %s", keys, g.key.ID, base64.StdEncoding.EncodeToString(g.key.Public))
			}
		})

		var laptop *api.Runtime
		t.Run("a runtime registers, and again under the same name updates", func(t *testing.T) {
			var err error
			laptop, err = rt1.RegisterRuntime(bg, api.RuntimeRegistration{Name: "laptop", Machine: "m1"})
			if err != nil || laptop.ID == "" {
				t.Fatalf("register: %v", err)
			}
			again, err := rt1.RegisterRuntime(bg, api.RuntimeRegistration{Name: "laptop", Machine: "m2", CallbackURL: "http://127.0.0.1:1"})
			if err != nil || again.ID != laptop.ID || again.Machine != "m2" {
				t.Fatalf("again: %+v %v", again, err)
			}
			if _, err := rt1.RegisterRuntime(bg, api.RuntimeRegistration{Name: "x", Machine: "m", CallbackURL: "not a url"}); status(err) != 400 {
				t.Fatalf("bad callback: %v, want 400", err)
			}
			if _, err := ag.RegisterRuntime(bg, api.RuntimeRegistration{Name: "x", Machine: "m"}); status(err) != 403 {
				t.Fatalf("agent: %v, want 403", err)
			}
		})

		t.Run("operators see every runtime, a runtime itself", func(t *testing.T) {
			if _, err := rt2.RegisterRuntime(bg, api.RuntimeRegistration{Name: "ci", Machine: "m3"}); err != nil {
				t.Fatal(err)
			}
			var all, own struct{ Runtimes []api.Runtime }
			if err := op.Do(bg, http.MethodGet, "/v1/runtimes", nil, nil, &all); err != nil {
				t.Fatal(err)
			}
			if err := rt1.Do(bg, http.MethodGet, "/v1/runtimes", nil, nil, &own); err != nil {
				t.Fatal(err)
			}
			if len(all.Runtimes) != 2 || len(own.Runtimes) != 1 || own.Runtimes[0].ID != laptop.ID {
				t.Fatalf("all = %d, own = %+v", len(all.Runtimes), own.Runtimes)
			}
		})

		t.Run("a request may name only the filer's runtime", func(t *testing.T) {
			rid := laptop.ID
			if _, err := rt2.File(bg, api.NewRequest{Title: "x", Options: allowDeny(), RuntimeID: &rid}, ""); status(err) != 400 {
				t.Fatalf("someone else's runtime: %v, want 400", err)
			}
			if _, err := rt1.File(bg, api.NewRequest{Title: "x", Options: allowDeny(), RuntimeID: &rid}, ""); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("only the runtime itself reads its feed", func(t *testing.T) {
			if _, err := rt2.Decisions(bg, laptop.ID, "", time.Second); status(err) != 404 {
				t.Fatalf("another runtime: %v, want 404", err)
			}
			if _, err := op.Decisions(bg, laptop.ID, "", time.Second); status(err) != 403 {
				t.Fatalf("operator: %v, want 403", err)
			}
			if _, err := rt1.Decisions(bg, laptop.ID, "x", time.Second); status(err) != 400 {
				t.Fatalf("bad cursor: %v, want 400", err)
			}
		})
	})
}

func TestWaitersAreNotHeldForForwarding(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		g := newAPI(t, dialect)
		op, rtc := g.as(t, models.RoleOperator), g.as(t, models.RoleRuntime)
		entered, release := make(chan struct{}, 1), make(chan struct{})
		register := func(callback string) string {
			rt, err := rtc.RegisterRuntime(bg, api.RuntimeRegistration{Name: "slow", Machine: "m", CallbackURL: callback})
			if err != nil {
				t.Fatal(err)
			}
			return rt.ID
		}
		rs := forwardtest.NewRuntime(t, g.key, register, nil, func(context.Context, api.Decision) error {
			entered <- struct{}{}
			<-release // the runtime is slow to act (a handler goroutine: t.Fatal may not be called here)
			return nil
		})
		defer close(release)
		rid := rs.RuntimeID
		events := g.attempts
		r, err := rtc.File(bg, api.NewRequest{Title: "git push", Options: allowDeny(), RuntimeID: &rid}, "")
		if err != nil {
			t.Fatal(err)
		}
		waited := make(chan *api.Wait, 1)
		go func() {
			w, err := rtc.Wait(bg, r.ID, 60*time.Second)
			if err != nil {
				t.Error(err)
			}
			waited <- w
		}()
		if _, err := op.Decide(bg, r.ID, 1, "once", ""); err != nil {
			t.Fatal(err)
		}
		next(t, entered, "the forward at the runtime")
		// The forward is in flight and held by the runtime: the waiter must
		// already have its answer.
		w := next(t, waited, "the waiter's answer")
		if w == nil || w.Status != "resolved" || w.TimedOut || w.Actuation.State != models.ActuationPending {
			t.Fatalf("wait = %+v", w)
		}
		release <- struct{}{}
		if e := next(t, events, "attempt"); e.A.State != models.ActuationDelivered {
			t.Fatalf("attempt = %+v", e.A)
		}
		got, err := op.Get(bg, r.ID)
		if err != nil || got.Actuation.State != models.ActuationDelivered || got.Actuation.Attempts != 1 || got.Version != 2 {
			t.Fatalf("after delivery: %+v %v", got, err)
		}
	})
}

func TestPullFeed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		g := newAPI(t, dialect)
		op, rtc := g.as(t, models.RoleOperator), g.as(t, models.RoleRuntime)
		rt, err := rtc.RegisterRuntime(bg, api.RuntimeRegistration{Name: "behind-nat", Machine: "m"})
		if err != nil {
			t.Fatal(err)
		}
		file := func() *api.Request {
			r, err := rtc.File(bg, api.NewRequest{Title: "git push", Options: allowDeny(), RuntimeID: &rt.ID}, "")
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		decide := func(r *api.Request) {
			if _, err := op.Decide(bg, r.ID, 1, "once", "ok"); err != nil {
				t.Fatal(err)
			}
		}
		reqs := []*api.Request{file(), file(), file(), file()}
		decide(reqs[0])
		decide(reqs[1])

		var mu sync.Mutex
		saved := ""
		got := make(chan api.Decision, 16)
		run := func() func() {
			ctx, cancel := context.WithCancel(bg)
			loop := &client.PullLoop{Client: rtc, RuntimeID: rt.ID, Wait: 30 * time.Second, Backoff: time.Millisecond,
				Handle: func(_ context.Context, d api.Decision) error { got <- d; return nil },
				LoadCursor: func(context.Context) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					return saved, nil
				},
				SaveCursor: func(_ context.Context, c string) error {
					mu.Lock()
					defer mu.Unlock()
					saved = c
					return nil
				},
			}
			done := make(chan struct{})
			go func() { _ = loop.Run(ctx); close(done) }()
			return func() { cancel(); <-done }
		}

		stop := run()
		for i := range 2 {
			if d := next(t, got, "decision"); d.RequestID != reqs[i].ID || d.Version != 2 || *d.Decision != "once" || d.DecidedAt == nil {
				t.Fatalf("decision %d = %+v", i, d)
			}
		}
		stop() // the runtime disconnects
		decide(reqs[2])

		stop = run() // and reconnects with its saved cursor
		defer stop()
		if d := next(t, got, "decision after reconnecting"); d.RequestID != reqs[2].ID {
			t.Fatalf("after reconnecting got %s, want %s: nothing missed, nothing repeated", d.RequestID, reqs[2].ID)
		}
		decide(reqs[3]) // taken while the runtime long-polls
		if d := next(t, got, "decision during the long-poll"); d.RequestID != reqs[3].ID {
			t.Fatalf("got %s, want %s", d.RequestID, reqs[3].ID)
		}
		select {
		case d := <-got:
			t.Fatalf("an extra decision: %+v", d)
		default:
		}
		// Asking for what follows a decision acknowledges it.
		for _, r := range reqs[:2] {
			cur, _ := op.Get(bg, r.ID)
			if cur.Actuation.State != models.ActuationDelivered {
				t.Fatalf("%s actuation = %+v, want delivered", r.ID, cur.Actuation)
			}
		}
	})
}
