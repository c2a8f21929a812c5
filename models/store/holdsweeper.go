package store

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// HoldSweeper ends hold windows on time. It sleeps until the next window ends and
// wakes early when a request is filed or edited (its hold may end sooner); it
// never polls.
// Every process may run one: ReleaseHolds is safe to race.
type HoldSweeper struct {
	Store   *Store
	Changes Subscriber
	// Swept, when set, is told after each sweep (tests wait on it).
	Swept func(n int, next time.Time, err error)
}

// retryAfter is how long the sweeper waits after a failed sweep.
const retryAfter = 5 * time.Second

// Run sweeps until ctx ends.
func (h *HoldSweeper) Run(ctx context.Context) {
	sub := h.Changes.Subscribe(256)
	defer func() { sub.Close() }()
	timer := time.NewTimer(0) // the first sweep settles what ended while no process ran
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			n, next, err := h.Store.ReleaseHolds(ctx)
			if err != nil && ctx.Err() == nil {
				slog.Error("hold sweep", "err", err)
				next = h.Store.Now().Add(retryAfter)
			}
			h.arm(timer, next)
			if h.Swept != nil {
				h.Swept(n, next, err)
			}
		case ch, ok := <-sub.C:
			if !ok {
				// Dropped for lagging: what was missed is unknown, so sweep now.
				sub = h.Changes.Subscribe(256)
				h.arm(timer, h.Store.Now())
				continue
			}
			if (ch.Action != "create" && ch.Action != "edit" && ch.Action != models.ActionResync) || !h.Store.Rules.Current().HasHold() {
				continue
			}
			h.drain(sub)
			next, err := h.Store.NextHold(ctx)
			if err != nil {
				next = h.Store.Now().Add(retryAfter)
			}
			h.arm(timer, next)
		}
	}
}

// drain takes what else is queued, so a burst of filings costs one query.
func (h *HoldSweeper) drain(sub *Subscription) {
	for {
		select {
		case _, ok := <-sub.C:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// arm sets the timer to fire at next (at once when it has passed); zero disarms.
func (h *HoldSweeper) arm(t *time.Timer, next time.Time) {
	t.Stop()
	if next.IsZero() {
		return
	}
	t.Reset(max(next.Sub(h.Store.Now()), 0))
}
