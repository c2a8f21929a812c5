package codexbridge

import (
	"context"
	"errors"

	"github.com/gatehousehq/gatehouse/client"
)

// settle marks an approval over without an answer from the bridge (Codex
// withdrew it) and withdraws its filing.
func (b *Bridge) settle(key, why string) {
	b.mu.Lock()
	p := b.pending[key]
	if p == nil || p.done {
		b.mu.Unlock()
		return
	}
	p.done = true
	delete(b.pending, key)
	delete(b.filed, p.requestID)
	b.mu.Unlock()
	b.withdraw(p, why)
}

// withdrawAll withdraws every approval still open when the session ends.
func (b *Bridge) withdrawAll() {
	b.mu.Lock()
	var open []*pending
	for key, p := range b.pending {
		p.done = true
		delete(b.pending, key)
		delete(b.filed, p.requestID)
		open = append(open, p)
	}
	b.mu.Unlock()
	for _, p := range open {
		b.withdraw(p, "the session ended")
	}
}

// withdraw stops the wait and cancels the Gatehouse request, in the
// background so the relay never waits on Gatehouse.
func (b *Bridge) withdraw(p *pending, why string) {
	p.stop()
	b.mu.Lock()
	id, first := p.requestID, !p.cancelled
	p.cancelled = p.cancelled || id != ""
	b.mu.Unlock()
	if id == "" || !first {
		return // not filed yet (askOperator withdraws it once filed), or already withdrawn
	}
	b.work.Add(1)
	go func() {
		defer b.work.Done()
		ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
		defer cancel()
		_, err := b.Gatehouse.Cancel(ctx, id)
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
