package acp

import (
	"context"
	"errors"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
)

// cancelSession answers every open permission request of the session
// cancelled (the editor cancelled the turn) and withdraws their filings.
func (b *Bridge) cancelSession(sessionID string) {
	b.mu.Lock()
	var open []*ask
	for _, a := range b.asks {
		if a.perm.Params.SessionID == sessionID {
			open = append(open, a)
		}
	}
	b.mu.Unlock()
	for _, a := range open {
		if b.answer(a, Outcome{Outcome: "cancelled"}) {
			b.logf("request %s cancelled with its session", a.key)
		}
		b.withdraw(a, "the editor cancelled the session's turn")
	}
}

// withdrawAll withdraws every request still open when the session ends.
func (b *Bridge) withdrawAll(why string) {
	b.mu.Lock()
	var open []*ask
	for key, a := range b.asks {
		a.done = true
		delete(b.asks, key)
		open = append(open, a)
	}
	b.mu.Unlock()
	for _, a := range open {
		b.withdraw(a, why)
	}
}

// withdraw stops the wait and cancels the Gatehouse request, in the
// background so the relay never waits on Gatehouse. A request not filed yet
// is withdrawn by askOperator once it is.
func (b *Bridge) withdraw(a *ask, why string) {
	if a.stop != nil {
		a.stop()
	}
	b.mu.Lock()
	if a.withdrawBy == "" {
		a.withdrawBy = why
	}
	id, first := a.requestID, !a.withdrawn
	a.withdrawn = a.withdrawn || id != ""
	b.mu.Unlock()
	if id == "" || !first {
		return
	}
	b.work.Add(1)
	go func() {
		defer b.work.Done()
		ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
		defer cancel()
		_, err := b.cancel(ctx, id, why)
		var e *client.Error
		switch {
		case err == nil:
			b.logf("%s cancelled: %s", id, why)
		case errors.As(err, &e) && e.Request != nil && e.Request.Status != "open":
			b.logf("%s was already %s when %s", id, e.Request.Status, why)
		default:
			b.logf("cancel %s: %v", id, err)
		}
	}()
}

// ReasonCanceller is a Gatehouse client that also records why a request was
// withdrawn, so the record shows it (decided in the editor, timed out).
type ReasonCanceller interface {
	CancelWithReason(ctx context.Context, id, reason string) (*api.Request, error)
}

func (b *Bridge) cancel(ctx context.Context, id, why string) (*api.Request, error) {
	if rc, ok := b.Gatehouse.(ReasonCanceller); ok {
		return rc.CancelWithReason(ctx, id, why)
	}
	return b.Gatehouse.Cancel(ctx, id)
}
