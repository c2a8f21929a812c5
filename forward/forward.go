// Package forward delivers decisions from the store's outbox to the callbacks
// of the runtimes that asked, signed with the server's key.
package forward

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/internal/retry"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/prometheus/client_golang/prometheus"
)

// ForwardStore is what the forwarder needs of the record.
type ForwardStore interface {
	ClaimFairForwards(ctx context.Context, owner string, limit int, lease time.Duration, perRuntime int, busy map[string]int) ([]store.Forward, error)
	FinishForward(ctx context.Context, f *store.Forward, owner string, a store.Attempt) (bool, error)
	ReleaseForward(ctx context.Context, f *store.Forward, owner string) error
	NextForwardDue(ctx context.Context, except ...string) (time.Time, error)
	GetRuntime(ctx context.Context, id string) (*models.Runtime, error)
}

// Forwarder sends decisions from the outbox to their runtimes' callbacks,
// signed with the server's key. It wakes on a committed decision and on a timer
// set to the next retry, never on a poll interval; it claims each row before
// sending, so several processes on one database share the work. A row survives
// a restart: whatever was pending is sent when the next forwarder starts.
type Forwarder struct {
	Store   ForwardStore
	Changes store.Subscriber
	Key     *store.ServerKey
	HTTP    *http.Client // default: 10s timeout per attempt
	// Now is the clock; it must be the store's, as due times are compared with it.
	Now func() time.Time
	// Backoff is the first retry delay, doubling per attempt up to MaxBackoff,
	// with the shared jitter of internal/retry (defaults 1s and 5m).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Lease is how long a claim holds (default 1m, above the HTTP timeout).
	Lease time.Duration
	// MaxSleep bounds a sleep, for rows written by a replica whose announcement
	// this process might not see (default 1m).
	MaxSleep time.Duration
	// Parallel is how many sends may be in flight (default 8).
	Parallel int
	// PerRuntime is how many of them one runtime may hold (default 2), so a
	// runtime whose callback hangs never takes the slots of the others; rows
	// are claimed round-robin across runtimes.
	PerRuntime int
	// ID names this process in claims (default a random id).
	ID string
	// Attempted, if set, is told of every recorded attempt (tests).
	Attempted func(f store.Forward, a store.Attempt)

	attempts *prometheus.CounterVec
}

// Instrument registers the forwarder's metrics: attempts by result.
func (f *Forwarder) Instrument(reg prometheus.Registerer) error {
	f.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_forward_attempts_total",
		Help: "Sends of decisions to runtime callbacks, by result: delivered, conflict, pending (to be retried), failed.",
	}, []string{"result"})
	return reg.Register(f.attempts)
}

func (f *Forwarder) defaults() {
	if f.HTTP == nil {
		f.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	f.HTTP = noRedirects(f.HTTP)
	if f.Now == nil {
		f.Now = func() time.Time { return time.Now().UTC() }
	}
	if f.Backoff <= 0 {
		f.Backoff = time.Second
	}
	if f.MaxBackoff <= 0 {
		f.MaxBackoff = 5 * time.Minute
	}
	if f.Lease <= 0 {
		f.Lease = time.Minute
	}
	if f.MaxSleep <= 0 {
		f.MaxSleep = time.Minute
	}
	if f.Parallel <= 0 {
		f.Parallel = 8
	}
	if f.PerRuntime <= 0 {
		f.PerRuntime = 2
	}
	if f.ID == "" {
		f.ID = models.NewID("fwd_")
	}
}

// Run forwards until ctx ends, and returns once every send in flight has
// finished or been given back.
func (f *Forwarder) Run(ctx context.Context) {
	f.defaults()
	sub := f.Changes.Subscribe(256)
	defer func() { sub.Close() }()
	timer := time.NewTimer(0)
	defer timer.Stop()
	fl := &flight{parallel: f.Parallel, perRuntime: f.PerRuntime, busy: map[string]int{}, finished: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-sub.C:
			if !ok { // dropped for lagging: resubscribe and look again (as on a resync)
				sub = f.Changes.Subscribe(256)
			} else if ch.Action != models.ActionResync && (ch.Status != models.StatusResolved || ch.Action == models.ActionActuation || ch.RuntimeID == "") {
				continue // nothing to send: only a resolved runtime's request has an outbox row
			}
		case <-fl.finished:
		case <-timer.C:
		}
		if err := f.sweep(ctx, fl, &wg); err != nil {
			// The database is unwell: pause rather than spin on a due row.
			timer.Reset(max(f.Backoff, time.Second))
			continue
		}
		timer.Reset(f.sleep(ctx, fl))
	}
}

// sweep claims what is due, up to the free slots and each runtime's share, and
// sends each in its own goroutine.
func (f *Forwarder) sweep(ctx context.Context, fl *flight, wg *sync.WaitGroup) error {
	free, busy := fl.snapshot()
	if free == 0 {
		return nil
	}
	rows, err := f.Store.ClaimFairForwards(ctx, f.ID, free, f.Lease, f.PerRuntime, busy)
	if err != nil && ctx.Err() == nil {
		slog.Error("forward: claim", "err", err)
	}
	for _, row := range rows {
		fl.take(row.RuntimeID)
		wg.Go(func() {
			defer fl.give(row.RuntimeID)
			f.deliver(ctx, row)
		})
	}
	return err
}

// sleep is how long to wait before the next look: until the next due row of a
// runtime with a free share, at most MaxSleep; with every slot busy, a finished
// send wakes the loop instead.
func (f *Forwarder) sleep(ctx context.Context, fl *flight) time.Duration {
	free, _ := fl.snapshot()
	if free == 0 {
		return f.MaxSleep
	}
	next, err := f.Store.NextForwardDue(ctx, fl.full()...)
	if err != nil {
		if ctx.Err() == nil {
			slog.Error("forward: next due", "err", err)
		}
		return f.MaxSleep
	}
	if next.IsZero() {
		return f.MaxSleep
	}
	return min(max(next.Sub(f.Now()), 0), f.MaxSleep)
}

// deliver sends one claimed row and records the outcome.
func (f *Forwarder) deliver(ctx context.Context, row store.Forward) {
	deliveryID := models.NewID("dlv_")
	status, sendErr := f.send(ctx, row, deliveryID)
	if ctx.Err() != nil {
		// Stopping: give the claim back uncounted so the next start sends it.
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := f.Store.ReleaseForward(bg, &row, f.ID); err != nil {
			slog.Error("forward: release", "request", row.RequestID, "err", err)
		}
		return
	}
	a := store.Attempt{HTTPStatus: status, DeliveryID: deliveryID}
	switch {
	case sendErr == nil && status/100 == 2:
		a.State = models.ActuationDelivered
	case sendErr == nil && status == http.StatusConflict:
		a.State, a.Error = models.ActuationConflict, "the runtime no longer holds the live callback (HTTP 409): open the session"
	default:
		a.Error = failure(row.RequestID, status, sendErr)
		now := f.Now()
		if !now.Before(row.Deadline) {
			a.State = models.ActuationFailed
		} else {
			a.State, a.NextAt = models.ActuationPending, minTime(now.Add(retry.After(f.Backoff, f.MaxBackoff, row.Attempts+1)), row.Deadline)
		}
	}
	// The outcome is recorded even if a stop begins now: the call was made.
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ok, err := f.Store.FinishForward(rec, &row, f.ID, a)
	if err != nil {
		slog.Error("forward: record attempt", "request", row.RequestID, "err", err)
		return
	}
	if ok && f.attempts != nil {
		f.attempts.WithLabelValues(a.State).Inc()
	}
	if ok && f.Attempted != nil {
		f.Attempted(row, a)
	}
}

// send POSTs the signed decision and returns the HTTP status.
func (f *Forwarder) send(ctx context.Context, row store.Forward, deliveryID string) (int, error) {
	rt, err := f.Store.GetRuntime(ctx, row.RuntimeID)
	if err != nil {
		return 0, fmt.Errorf("runtime %s: %w", row.RuntimeID, err)
	}
	if rt.CallbackURL == "" {
		return 0, errCallback("the runtime has no callback_url")
	}
	target := rt.CallbackURL + api.DecidePath
	u, err := url.Parse(target)
	if err != nil {
		return 0, errCallback("callback_url does not parse")
	}
	body, err := json.Marshal(api.Decision{RequestID: row.RequestID, Version: row.Version, Decision: row.Decision, Answer: row.Answer, Note: row.Note,
		DecidedDigest: row.DecidedDigest, DecidedVia: row.DecidedVia})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "gatehouse-forwarder/1")
	req.Header.Set(api.HeaderIdempotent, row.RequestID+":"+strconv.Itoa(row.Version))
	api.Sign(req.Header, f.Key.Private(), f.Key.ID, http.MethodPost, u.EscapedPath(), f.Now(), deliveryID, row.RuntimeID, body)
	resp, err := f.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
