package store

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// EscalationSweeper fires escalation steps on time. Like HoldSweeper it
// sleeps until the next step is due (on the store's clock) and wakes early
// when a filing's first step comes sooner; it never polls. Every process may
// run one: Escalate is safe to race.
type EscalationSweeper struct {
	Store   *Store
	Changes Subscriber
	// Swept, when set, is told after each sweep (tests wait on it).
	Swept func(n int, next time.Time, err error)
}

// Run sweeps until ctx ends.
func (w *EscalationSweeper) Run(ctx context.Context) {
	sub := w.Changes.Subscribe(256)
	defer func() { sub.Close() }()
	timer := time.NewTimer(0) // the first sweep fires what fell due while no process ran
	defer timer.Stop()
	due := time.Time{} // when the timer fires; zero: disarmed
	arm := func(next time.Time) {
		timer.Stop()
		due = next
		if !next.IsZero() {
			timer.Reset(max(next.Sub(w.Store.Now()), 0))
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			n, next, err := w.Store.Escalate(ctx)
			if err != nil && ctx.Err() == nil {
				slog.Error("escalation sweep", "err", err)
				next = w.Store.Now().Add(retryAfter)
			}
			if now := w.Store.Now(); n == 0 && !next.IsZero() && !next.After(now) {
				// Due but not fired: it raced a vote or an edit. Look again
				// shortly, not in a tight loop.
				next = now.Add(time.Second)
			}
			arm(next)
			if w.Swept != nil {
				w.Swept(n, next, err)
			}
		case ch, ok := <-sub.C:
			switch {
			case !ok: // dropped for lagging: what was missed is unknown
				sub = w.Changes.Subscribe(256)
				arm(w.Store.Now())
			case ch.Action == models.ActionResync:
				arm(w.Store.Now())
			case (ch.Action == "create" || ch.Action == ActionRequire) && ch.Record != nil && ch.Record.EscalateAt != nil:
				// Only ever earlier: a stream of filings cannot postpone a due step.
				if at := *ch.Record.EscalateAt; due.IsZero() || at.Before(due) {
					arm(at)
				}
			case (ch.Action == "create" || ch.Action == ActionRequire) && ch.Record == nil:
				// The announcement could not carry the record: ask when the next step is.
				next, err := w.Store.NextEscalation(ctx)
				if err != nil {
					next = w.Store.Now().Add(retryAfter)
				}
				if !next.IsZero() && (due.IsZero() || next.Before(due)) {
					arm(next)
				}
			}
		}
	}
}
