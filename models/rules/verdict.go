package rules

import (
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// Hold marks a new record held when the verdict says so; it is stored with the
// record, so version 1 is already what the operator sees.
func (v Verdict) Hold(r *models.Request, now time.Time) {
	if v.Action != RuleHold {
		return
	}
	name, then, effect, until := v.Rule, v.Option, v.Effect, now.Add(v.Window)
	r.HoldRule, r.HoldThen, r.HoldEffect, r.HoldUntil = &name, &then, &effect, &until
}

// Rehold sets the hold of an edited request (next) from the rules' verdict on
// it: the filer's edit is judged as a filing would be, so rewording or
// re-labelling cannot keep a hold whose rule no longer applies. A new hold never
// ends later than the one it replaces, so edits cannot postpone a window; and a
// hold kept on the same option keeps the effect it was set with, so re-labelling
// that option (deny now "allow") lapses it instead. It returns why the old hold
// lapsed, or "".
func (v Verdict) Rehold(next, was *models.Request, now time.Time) string {
	next.HoldRule, next.HoldThen, next.HoldEffect, next.HoldUntil = nil, nil, nil, nil
	if !was.Held() {
		v.Hold(next, now)
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
	v.Hold(next, now)
	if was.HoldUntil.Before(*next.HoldUntil) {
		until := *was.HoldUntil
		next.HoldUntil = &until
	}
	return ""
}

// EvaluateEdit judges a request whose text or options changed after filing
// (PATCH). An edit can never lead to approve: the filer
// could otherwise reword its request into an approve rule. A verdict that
// would allow with no person involved — approve, or a hold whose window ends
// in anything but a deny — becomes "go to the operator"; a deny, or a hold
// that ends in a deny, stands.
func (rs *Rules) EvaluateEdit(r *models.Request) Verdict {
	v := rs.Evaluate(r)
	if v.Deferred == "" && (v.Action == RuleApprove || (v.Action == RuleHold && v.Effect != models.EffectDeny)) {
		return Verdict{Rule: v.Rule, Line: v.Line, Deferred: "the request was edited after filing, and an edit never leads to " + v.Action}
	}
	return v
}

// UnderPolicy keeps a rule from taking a request with an approval policy out
// of its approvers' hands: an approve, or a hold that would decide on its own,
// defers to the operators; a deny still denies.
func (v Verdict) UnderPolicy(r *models.Request) Verdict {
	if r.Approvers == nil || v.Deferred != "" || (v.Action != RuleApprove && v.Action != RuleHold) {
		return v
	}
	return Verdict{Rule: v.Rule, Line: v.Line, Deferred: "the request has an approval policy: its approvers decide"}
}
