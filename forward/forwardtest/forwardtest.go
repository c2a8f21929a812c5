// Package forwardtest plays a runtime for tests of forwarding: a real HTTP
// server at a callback URL that verifies each forward with client.Handler.
package forwardtest

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models/store"
)

// CapWait bounds every wait on an event, so a broken forwarder fails the test
// instead of hanging it; it is not a timing assertion.
const CapWait = 20 * time.Second

// Next receives one value from ch, failing the test after CapWait.
func Next[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(CapWait):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// Runtime is a real HTTP server playing a runtime with client.Handler.
type Runtime struct {
	*httptest.Server
	RuntimeID string
	Calls     atomic.Int32
	// Handler verifies each forward; set its Filed before any is sent.
	Handler   *client.Handler
	Decisions chan api.Decision // each verified decision the handler accepted
}

// NewRuntime starts a runtime. register registers it with the server at its
// callback URL and returns its id (the handler accepts forwards for it only).
// before, when set, may answer a call itself (return true) instead of the
// handler; decide, when set, runs on each verified decision and may refuse it.
func NewRuntime(t testing.TB, key *store.ServerKey, register func(callback string) string, before func(n int, w http.ResponseWriter, r *http.Request) bool, decide func(ctx context.Context, d api.Decision) error) *Runtime {
	t.Helper()
	rs := &Runtime{Decisions: make(chan api.Decision, 16)}
	h := &client.Handler{
		Keys: map[string]ed25519.PublicKey{key.ID: ed25519.PublicKey(key.Public)},
		OnDecision: func(ctx context.Context, d api.Decision) error {
			if decide != nil {
				if err := decide(ctx, d); err != nil {
					return err
				}
			}
			rs.Decisions <- d
			return nil
		},
	}
	rs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(rs.Calls.Add(1))
		if r.URL.Path != api.DecidePath {
			http.NotFound(w, r)
			return
		}
		if before != nil && before(n, w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(rs.Close)
	rs.Handler = h
	rs.RuntimeID = register("http://" + rs.Listener.Addr().String())
	h.RuntimeID = rs.RuntimeID
	rs.Start()
	return rs
}

// Attempt is one recorded attempt, as Forwarder.Attempted reports it.
type Attempt struct {
	F store.Forward
	A store.Attempt
}

// Attempts returns a channel of attempts and the Attempted hook that feeds it.
func Attempts() (<-chan Attempt, func(store.Forward, store.Attempt)) {
	ch := make(chan Attempt, 64)
	return ch, func(f store.Forward, a store.Attempt) { ch <- Attempt{f, a} }
}
