package models

import (
	"context"
	"log/slog"
	"time"

	"gorm.io/gorm"
)

// hold marks a new record held when the verdict says so; it is stored with the
// record, so version 1 is already what the operator sees.
func (v Verdict) hold(r *Request, now time.Time) {
	if v.Action != RuleHold {
		return
	}
	name, then, until := v.Rule, v.Option, now.Add(v.Window)
	r.HoldRule, r.HoldThen, r.HoldUntil = &name, &then, &until
}

// auditVerdict records, in the filing's transaction, a hold or a rule that
// matched but had to leave the request to the operator.
func (s *Store) auditVerdict(tx *gorm.DB, r *Request, v Verdict) error {
	switch {
	case v.Deferred != "":
		return s.audit(tx, r, "rule_deferred", ViaRule(v.Rule), ViaRule(v.Rule), map[string]any{"rule": v.Rule, "why": v.Deferred})
	case v.Action == RuleHold:
		return s.audit(tx, r, "hold", ViaRule(v.Rule), ViaRule(v.Rule),
			map[string]any{"rule": v.Rule, "until": r.HoldUntil.Format(time.RFC3339), "then": v.Option})
	}
	return nil
}

// applyVerdict decides a new record as an approve or deny rule says, and returns
// the record as it then stands. A decision that cannot be recorded (an operator
// was faster, the database failed) leaves the request as it is, and is logged.
func (s *Store) applyVerdict(ctx context.Context, r *Request, v Verdict, hooks []DecisionHook) *Request {
	if v.Deferred != "" {
		slog.Info("rule matched but leaves the request to the operator", "rule", v.Rule, "line", v.Line, "request", r.ID, "why", v.Deferred)
		return r
	}
	if v.Action != RuleApprove && v.Action != RuleDeny {
		return r
	}
	d, err := s.Decide(ctx, r.ID, Decision{Version: r.Version, Option: v.Option, By: ViaRule(v.Rule), Via: ViaRule(v.Rule)}, hooks...)
	if err != nil {
		slog.Error("rule decision not recorded", "rule", v.Rule, "request", r.ID, "err", err)
		if cur, gerr := s.GetRequest(ctx, r.ID); gerr == nil {
			return cur
		}
		return r
	}
	return d
}
