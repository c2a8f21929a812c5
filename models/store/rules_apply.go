package models

import (
	"context"
	"errors"
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
	name, then, effect, until := v.Rule, v.Option, v.Effect, now.Add(v.Window)
	r.HoldRule, r.HoldThen, r.HoldEffect, r.HoldUntil = &name, &then, &effect, &until
}

// rehold sets the hold of an edited request (next) from the rules' verdict on
// it: the filer's edit is judged as a filing would be, so rewording or
// re-labelling cannot keep a hold whose rule no longer applies. A new hold never
// ends later than the one it replaces, so edits cannot postpone a window; and a
// hold kept on the same option keeps the effect it was set with, so re-labelling
// that option (deny now "allow") lapses it instead. It returns why the old hold
// lapsed, or "".
func (v Verdict) rehold(next, was *Request, now time.Time) string {
	next.HoldRule, next.HoldThen, next.HoldEffect, next.HoldUntil = nil, nil, nil, nil
	if !was.Held() {
		v.hold(next, now)
		return ""
	}
	switch {
	case v.Action == RuleApprove || v.Action == RuleDeny:
		return "rule " + quote(v.Rule) + " decides the edited request"
	case v.Action != RuleHold:
		return "the edited request is no longer held by any rule"
	case v.Rule == *was.HoldRule && v.Option == *was.HoldThen && (was.HoldEffect == nil || v.Effect != *was.HoldEffect):
		return "option " + quote(v.Option) + " no longer has the effect the rule chose"
	}
	v.hold(next, now)
	if was.HoldUntil.Before(*next.HoldUntil) {
		until := *was.HoldUntil
		next.HoldUntil = &until
	}
	return ""
}

// auditRejudge records, in an edit's transaction, what the rules made of the
// edited request: a hold that lapsed (why), a new hold, or a rule that deferred.
func (s *Store) auditRejudge(tx *gorm.DB, was, next *Request, v Verdict, why string) error {
	if why != "" {
		if err := s.audit(tx, next, "hold_lapsed", ViaRule(*was.HoldRule), ViaRule(*was.HoldRule),
			map[string]any{"rule": *was.HoldRule, "why": why}); err != nil {
			return err
		}
	}
	if !next.Held() && v.Action == RuleHold {
		return nil // the lapse said it all
	}
	if sameHold(was, next) {
		return nil // still held as before: nothing new to say
	}
	return s.auditVerdict(tx, next, v)
}

func sameHold(a, b *Request) bool {
	return a.Held() && b.Held() && *a.HoldRule == *b.HoldRule && *a.HoldThen == *b.HoldThen &&
		a.HoldUntil.Equal(*b.HoldUntil) && a.HoldEffect != nil && b.HoldEffect != nil && *a.HoldEffect == *b.HoldEffect
}

// auditVerdict records, in the filing's transaction, a hold or a rule that
// matched but had to leave the request to the operator.
func (s *Store) auditVerdict(tx *gorm.DB, r *Request, v Verdict) error {
	switch {
	case v.Deferred != "":
		return s.audit(tx, r, "rule_deferred", ViaRule(v.Rule), ViaRule(v.Rule), map[string]any{"rule": v.Rule, "why": v.Deferred})
	case v.Action == RuleRequire:
		return s.audit(tx, r, "require", ViaRule(v.Rule), ViaRule(v.Rule),
			map[string]any{"rule": v.Rule, "groups": r.Approvers.Groups, "required": r.Approvers.Required, "note": r.Approvers.Note})
	case v.Action == RuleHold:
		return s.audit(tx, r, "hold", ViaRule(v.Rule), ViaRule(v.Rule),
			map[string]any{"rule": v.Rule, "until": r.HoldUntil.Format(time.RFC3339), "then": v.Option})
	}
	return nil
}

// ruleDecision is the decision an approve or deny verdict makes on r, or nil
// when it makes none: no match, a hold, a deferral, or a choice r cannot take,
// which is logged and leaves r to the operator. A filing takes it in its own
// transaction (one commit, one fsync); an edit through applyVerdict.
func (s *Store) ruleDecision(r *Request, v Verdict) *Decision {
	if v.Deferred != "" {
		slog.Info("rule matched but leaves the request to the operator", "rule", v.Rule, "line", v.Line, "request", r.ID, "why", v.Deferred)
		return nil
	}
	if v.Action != RuleApprove && v.Action != RuleDeny {
		return nil
	}
	d := Decision{Version: r.Version, Option: v.Option, By: ViaRule(v.Rule), Via: ViaRule(v.Rule)}
	if err := errors.Join(d.validate(), s.checkDecision(r, d, false)); err != nil {
		slog.Error("rule decision not recorded", "rule", v.Rule, "request", r.ID, "err", err)
		return nil
	}
	return &d
}

// applyVerdict decides an edited record as an approve or deny rule says, and
// returns the record as it then stands. A decision that cannot be recorded (an
// operator was faster, the database failed) leaves the request as it is, and
// is logged.
func (s *Store) applyVerdict(ctx context.Context, r *Request, v Verdict) *Request {
	rule := s.ruleDecision(r, v)
	if rule == nil {
		return r
	}
	d, err := s.Decide(ctx, r.ID, *rule)
	if err != nil {
		slog.Error("rule decision not recorded", "rule", v.Rule, "request", r.ID, "err", err)
		if cur, gerr := s.GetRequest(ctx, r.ID); gerr == nil {
			return cur
		}
		return r
	}
	return d
}

// EvaluateEdit judges a request whose text or options changed after filing
// (PATCH). An edit can never lead to approve (DESIGN.md "Rules"): the filer
// could otherwise reword its request into an approve rule. A verdict that
// would allow with no person involved — approve, or a hold whose window ends
// in anything but a deny — becomes "go to the operator"; a deny, or a hold
// that ends in a deny, stands.
func (rs *Rules) EvaluateEdit(r *Request) Verdict {
	v := rs.Evaluate(r)
	if v.Deferred == "" && (v.Action == RuleApprove || (v.Action == RuleHold && v.Effect != EffectDeny)) {
		return Verdict{Rule: v.Rule, Line: v.Line, Deferred: "the request was edited after filing, and an edit never leads to " + v.Action}
	}
	return v
}

// underPolicy keeps a rule from taking a request with an approval policy out
// of its approvers' hands: an approve, or a hold that would decide on its own,
// defers to the operators; a deny still denies.
func (v Verdict) underPolicy(r *Request) Verdict {
	if r.Approvers == nil || v.Deferred != "" || (v.Action != RuleApprove && v.Action != RuleHold) {
		return v
	}
	return Verdict{Rule: v.Rule, Line: v.Line, Deferred: "the request has an approval policy: its approvers decide"}
}
