package push

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// reachable answers whether a device's owner may be pushed to now: not away
// and not in their quiet hours. A device of no known owner (registered before
// owners counted) is always reachable. When availability cannot be read,
// everyone is: a push too many is better than silence.
func (r *Router) reachable(ctx context.Context) func(models.Device) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	avs, err := r.store.ListAvailability(ctx)
	if err != nil {
		slog.Error("push: read availability", "err", err)
		return func(models.Device) bool { return true }
	}
	now := r.cfg.Now()
	quiet := map[string]bool{}
	for i := range avs {
		a := &avs[i]
		if a.AwayAt(now) || a.QuietAt(now) {
			quiet[a.Operator] = true
		}
	}
	return func(d models.Device) bool {
		return !d.Owned || !quiet[strings.TrimPrefix(d.Operator, models.RoleOperator+":")]
	}
}

// escalated alerts the operators an escalation step has just made approvers:
// the devices whose owner may vote on the request now and could not before.
// One replica sends it (a claim per step).
func (r *Router) escalated(ctx context.Context, ch models.Change) {
	rec := ch.Record
	if rec == nil {
		var err error
		if rec, err = r.read(ctx, ch.RequestID); err != nil {
			return
		}
	}
	if len(rec.Escalations) == 0 || planFor(rec) != TypeAlert {
		return
	}
	last := rec.Escalations[len(rec.Escalations)-1]
	if len(last.Groups) == 0 {
		return // the last step ends the request: the decision's clear follows
	}
	before := *rec
	before.Escalations = rec.Escalations[:len(rec.Escalations)-1]
	if len(r.claim(ctx, []string{rec.ID}, escalationClaim(last.Step))) == 0 {
		return
	}
	reach := r.reachable(ctx)
	r.sent[rec.ID] = r.cfg.Now()
	m := Message{Type: TypeAlert, RequestID: rec.ID, RequestIDs: []string{rec.ID}, Count: 1, Version: rec.Version,
		URL: RequestURL(r.cfg.BaseURL, rec.ID), Badge: r.openCount(ctx)}
	r.enqueueTo(ctx, m, func(d models.Device) bool {
		return d.MayVoteOn(rec) && !d.MayVoteOn(&before) && reach(d)
	})
}

// escalationClaim is the push claim type of escalation step n.
func escalationClaim(n int) string { return "escalate-" + string(rune('0'+n)) }
