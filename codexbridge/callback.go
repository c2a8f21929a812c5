package codexbridge

import (
	"context"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
)

// OnDecision takes a decision the server forwarded to this bridge's runtime
// callback (client.Handler.OnDecision). A decision for an approval the bridge
// no longer holds (it restarted, or the local client answered first) is
// client.ErrGone: the server records a conflict and tells the operator.
//
// The decision is read back from Gatehouse and judged by operatorChoice,
// like the wait's, so whether Gatehouse decided is said in one place.
func (b *Bridge) OnDecision(ctx context.Context, d api.Decision) error {
	b.mu.Lock()
	p, settled := b.filed[d.RequestID], b.settled[d.RequestID]
	var filedAs *api.Request
	if p != nil {
		filedAs = p.filedAs
	}
	b.mu.Unlock()
	if settled {
		return nil
	}
	if p == nil {
		return client.ErrGone
	}
	final, err := b.Gatehouse.Get(ctx, d.RequestID)
	if err != nil {
		return err // the server retries
	}
	option := operatorChoice(filedAs, final)
	if _, ok := p.approval.results[option]; !ok {
		return client.ErrGone
	}
	if !b.answerCodex(p, option, deref(final.DecidedBy)) {
		return client.ErrGone
	}
	return nil
}

// operatorChoice is the option the operator chose on what the bridge filed,
// "" for none: chosen on the server (through models.SelectOption, as on every
// surface), and here one of the filed options, decided on the filed digest.
func operatorChoice(filed, final *api.Request) string {
	return client.DecidedOption(filed, final)
}
