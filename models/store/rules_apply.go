package store

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"gorm.io/gorm"
)

// auditRejudge records, in an edit's transaction, what the rules made of the
// edited request: a hold that lapsed (why), a new hold, or a rule that deferred.
func (s *Store) auditRejudge(tx *gorm.DB, was, next *models.Request, v rules.Verdict, why string) error {
	if why != "" {
		if err := s.audit(tx, next, "hold_lapsed", models.ViaRule(*was.HoldRule), models.ViaRule(*was.HoldRule),
			map[string]any{"rule": *was.HoldRule, "why": why}); err != nil {
			return err
		}
	}
	if !next.Held() && v.Action == rules.RuleHold {
		return nil // the lapse said it all
	}
	if sameHold(was, next) {
		return nil // still held as before: nothing new to say
	}
	return s.auditVerdict(tx, next, v)
}

func sameHold(a, b *models.Request) bool {
	return a.Held() && b.Held() && *a.HoldRule == *b.HoldRule && *a.HoldThen == *b.HoldThen &&
		a.HoldUntil.Equal(*b.HoldUntil) && a.HoldEffect != nil && b.HoldEffect != nil && *a.HoldEffect == *b.HoldEffect
}

// auditVerdict records, in the filing's transaction, a hold or a rule that
// matched but had to leave the request to the operator.
func (s *Store) auditVerdict(tx *gorm.DB, r *models.Request, v rules.Verdict) error {
	switch {
	case v.Deferred != "":
		return s.audit(tx, r, "rule_deferred", models.ViaRule(v.Rule), models.ViaRule(v.Rule), map[string]any{"rule": v.Rule, "why": v.Deferred})
	case v.Action == rules.RuleRequire:
		return s.audit(tx, r, "require", models.ViaRule(v.Rule), models.ViaRule(v.Rule),
			map[string]any{"rule": v.Rule, "groups": r.Approvers.Groups, "required": r.Approvers.Required, "note": r.Approvers.Note})
	case v.Action == rules.RuleHold:
		return s.audit(tx, r, "hold", models.ViaRule(v.Rule), models.ViaRule(v.Rule),
			map[string]any{"rule": v.Rule, "until": r.HoldUntil.Format(time.RFC3339), "then": v.Option})
	}
	return nil
}

// ruleDecision is the decision an approve or deny verdict makes on r, or nil
// when it makes none: no match, a hold, a deferral, or a choice r cannot take,
// which is logged and leaves r to the operator. A filing takes it in its own
// transaction (one commit, one fsync); an edit through applyVerdict.
func (s *Store) ruleDecision(r *models.Request, v rules.Verdict) *models.Decision {
	if v.Deferred != "" {
		slog.Info("rule matched but leaves the request to the operator", "rule", v.Rule, "line", v.Line, "request", r.ID, "why", v.Deferred)
		return nil
	}
	if v.Action != rules.RuleApprove && v.Action != rules.RuleDeny {
		return nil
	}
	d := models.Decision{Version: r.Version, Option: v.Option, By: models.ViaRule(v.Rule), Via: models.ViaRule(v.Rule)}
	if err := errors.Join(d.Validate(), s.checkDecision(r, d, false)); err != nil {
		slog.Error("rule decision not recorded", "rule", v.Rule, "request", r.ID, "err", err)
		return nil
	}
	return &d
}

// applyVerdict decides an edited record as an approve or deny rule says, and
// returns the record as it then stands. A decision that cannot be recorded (an
// operator was faster, the database failed) leaves the request as it is, and
// is logged.
func (s *Store) applyVerdict(ctx context.Context, r *models.Request, v rules.Verdict) *models.Request {
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
