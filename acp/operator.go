package acp

import (
	"context"
	"errors"
	"time"

	"github.com/gatehousehq/gatehouse/client"
)

// Bounds on one call to Gatehouse that is not cut short by an answer.
const (
	fileTimeout   = 30 * time.Second
	cancelTimeout = 5 * time.Second
	expiryMargin  = 10 // seconds
)

// askOperator files the permission request, waits for the operator until
// the timeout and, when they decide first, answers the agent with the
// agent's option they chose.
func (b *Bridge) askOperator(ctx context.Context, a *ask) {
	n := a.perm.Request
	// The request outlives the wait a little, so the bridge's own cancel,
	// which says why, closes it rather than the expiry.
	secs := int64((b.Timeout+time.Second-1)/time.Second) + expiryMargin
	n.ExpiresIn = &secs
	// The filing is not cut short by an answer meanwhile: a request the
	// server created must come back with its id, to be withdrawn.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fileTimeout)
	r, err := b.Gatehouse.File(fctx, n, a.filing)
	cancel()
	if err != nil {
		b.logf("request %s not filed: %v", a.key, err)
		b.noDecision(a, "Gatehouse did not take it")
		return
	}
	b.mu.Lock()
	a.requestID, a.filedAs = r.ID, r
	done, why := a.done, a.withdrawBy
	b.mu.Unlock()
	b.logf("request %s filed as %s: %s", a.key, r.ID, r.Title)
	if done {
		// Answered while it was being filed. Whoever answered withdraws it
		// too: here if they already tried (why is set), else once they do.
		if why != "" {
			b.withdraw(a, why)
		}
		return
	}
	final := r
	if r.Status == "open" {
		wctx, cancel := context.WithTimeout(ctx, b.Timeout)
		final, err = b.Gatehouse.WaitSettled(wctx, r.ID)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			b.noDecision(a, "no decision in Gatehouse within "+b.Timeout.String())
			return
		case err != nil && ctx.Err() != nil:
			return // answered elsewhere, or the bridge stops: the withdrawal follows
		case err != nil:
			b.logf("wait for %s: %v", r.ID, err)
			b.noDecision(a, "Gatehouse stopped answering")
			return
		}
	}
	// The decided option: the operator chose it on the server (through
	// models.SelectOption, as on every surface); here it only has to be one
	// of those filed, decided on the filed digest. The agent's option is
	// looked up by it.
	option := client.DecidedOption(r, final)
	agentOption, known := a.perm.AgentOption[option]
	if option == "" || !known {
		b.noDecision(a, r.ID+" ended "+final.Status+" without a decision made on what was filed")
		return
	}
	by := "the operator"
	if final.DecidedBy != nil {
		by = *final.DecidedBy
	}
	if b.answer(a, Outcome{Outcome: "selected", OptionID: agentOption}) {
		b.logf("request %s answered from Gatehouse: %s (%s) by %s", a.key, option, agentOption, by)
	}
}

// noDecision is what happens without the operator's answer: attached, the
// editor alone decides (the filing is withdrawn); headless, the agent gets
// its reject option, never an allow.
func (b *Bridge) noDecision(a *ask, why string) {
	if !b.Headless {
		b.logf("request %s: %s; the editor decides", a.key, why)
		b.withdraw(a, why+"; left to the editor")
		return
	}
	o := Outcome{Outcome: "cancelled"}
	if a.perm.Reject != "" {
		o = Outcome{Outcome: "selected", OptionID: a.perm.Reject}
	}
	if b.answer(a, o) {
		b.logf("request %s: %s; answered %s %s", a.key, why, o.Outcome, o.OptionID)
	}
	b.withdraw(a, why)
}

// answer sends the agent the outcome, unless the request was answered
// already, and withdraws the editor's copy. It reports whether it answered.
func (b *Bridge) answer(a *ask, o Outcome) bool {
	b.mu.Lock()
	if a.done {
		b.mu.Unlock()
		return false
	}
	a.done = true
	delete(b.asks, a.key)
	if !b.Headless {
		b.answered[a.key]++
	}
	b.mu.Unlock()
	if !b.Headless {
		// The protocol's way to withdraw a request: the editor drops its
		// prompt, and its late answer, if any, is dropped here. Sent first,
		// so the editor hears of it before anything the answer causes.
		_ = b.toEditor.send(notification{JSONRPC: "2.0", Method: MethodCancelRequest, Params: map[string]any{"requestId": a.id}})
	}
	if err := b.toAgent.send(response{JSONRPC: "2.0", ID: a.id, Result: permissionResult(o)}); err != nil {
		b.logf("answer %s to the agent: %v", a.key, err)
	}
	return true
}
