package store

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// Subscriber is the change bus as its listeners see it (a *Changes): the
// sweepers, the forwarder, the push router and the page all take one.
type Subscriber interface {
	Subscribe(n int) *Subscription
}

// Sweeper settles requests at their expiry. It sleeps until the next expiry it
// knows of, brought earlier by a new request that expires sooner, so nothing
// waits on a poll interval and nothing stays open past its time by more than a
// moment.
type Sweeper struct {
	Store   *Store
	Changes Subscriber
	// MaxSleep bounds a sleep, so a request filed by another replica (whose
	// announcement this process might not see) is still settled on time enough.
	MaxSleep time.Duration
	// Settled, if set, is told how many requests each sweep settled (tests, metrics).
	Settled func(n int)
}

// Run sweeps until ctx ends.
func (w *Sweeper) Run(ctx context.Context) {
	if w.MaxSleep <= 0 {
		w.MaxSleep = time.Minute
	}
	sub := w.Changes.Subscribe(256)
	defer func() { sub.Close() }()
	timer := time.NewTimer(0)
	defer timer.Stop()
	due := time.Now()    // when the timer fires
	var purged time.Time // when expired sessions were last purged
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-sub.C:
			if !ok { // dropped for lagging: resubscribe and look again
				sub = w.Changes.Subscribe(256)
			} else if ch.Action != "create" && ch.Action != models.ActionResync {
				continue
			}
			// A new request may expire before the timer fires. Its record says
			// when, so the look moves to then (a sweep's 5 ms after), and a
			// filing that expires later costs no sweep; a change without its
			// record (a resync) looks shortly after, coalescing a burst. Only
			// ever bring the look earlier, so a steady stream of filings cannot
			// postpone a due sweep forever.
			at := time.Now().Add(50 * time.Millisecond)
			if ok && ch.Record != nil {
				at = ch.Record.ExpiresAt.Add(5 * time.Millisecond)
			}
			if at.Before(due) {
				timer.Reset(max(time.Until(at), 0))
				due = at
			}
			continue
		case <-timer.C:
		}
		n, next, err := w.Store.Expire(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Error("expiry sweep", "err", err)
		}
		// Expired sessions are refused already; a pass at most a minute apart
		// (MaxSleep) deletes them, so none outlives its time by more.
		if time.Since(purged) >= w.MaxSleep {
			if _, err := w.Store.PurgeSessions(ctx); err != nil && ctx.Err() == nil {
				slog.Error("session purge", "err", err)
			}
			// Agent sessions silent for a day retire on the same pass.
			if _, err := w.Store.RetireSessions(ctx); err != nil && ctx.Err() == nil {
				slog.Error("agent session retirement", "err", err)
			}
			purged = time.Now()
		}
		if w.Settled != nil {
			w.Settled(n)
		}
		sleep := w.MaxSleep
		if !next.IsZero() {
			if d := time.Until(next) + 5*time.Millisecond; d < sleep {
				sleep = max(d, 0)
			}
		}
		// Since Go 1.23 Reset discards a stale tick; no drain is needed.
		timer.Reset(sleep)
		due = time.Now().Add(sleep)
	}
}
