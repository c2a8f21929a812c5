package store

import (
	"context"
	"slices"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// ActionEscalate is the audit action and change of one escalation step.
const ActionEscalate = "escalate"

// Escalate fires every escalation step whose time has come on an open request
// (filing time plus the step's after, on the store's clock), and any step
// after it that is due or whose every eligible approver is away. Each step is
// a conditional update on the request's version and step count, so of several
// processes sweeping at once exactly one fires it. It returns how many steps
// fired and when the next is due (zero when none is pending).
func (s *Store) Escalate(ctx context.Context) (int, time.Time, error) {
	now := s.now()
	var due []models.Request
	err := s.DB.WithContext(ctx).Where("status = ? AND escalate_at IS NOT NULL AND escalate_at <= ? AND expires_at > ?", models.StatusOpen, now, now).
		Order("escalate_at").Limit(500).Find(&due).Error
	if err != nil {
		return 0, time.Time{}, err
	}
	n := 0
	ro := &roster{s: s}
	for i := range due {
		fired, err := s.escalate(ctx, &due[i], ro)
		n += fired
		if err != nil {
			return n, time.Time{}, err
		}
	}
	next, err := s.NextEscalation(ctx)
	return n, next, err
}

// NextEscalation returns when the next escalation step is due; zero when none.
func (s *Store) NextEscalation(ctx context.Context) (time.Time, error) {
	var next []models.Request
	now := s.now()
	err := s.DB.WithContext(ctx).Select("escalate_at").
		Where("status = ? AND escalate_at IS NOT NULL AND expires_at > ?", models.StatusOpen, now).
		Order("escalate_at").Limit(1).Find(&next).Error
	if err != nil || len(next) == 0 || next[0].EscalateAt == nil {
		return time.Time{}, err
	}
	return *next[0].EscalateAt, nil
}

// EscalateAway fires, at once, the next step of every open request with
// steps left whose every eligible approver is away (all of them when ids is
// empty): nobody who could decide will be told, so the next people are.
func (s *Store) EscalateAway(ctx context.Context, ids ...string) (int, error) {
	q := s.DB.WithContext(ctx).Where("status = ? AND escalate_at IS NOT NULL AND expires_at > ?", models.StatusOpen, s.now())
	if len(ids) > 0 {
		q = q.Where("id IN ?", ids)
	}
	var open []models.Request
	if err := q.Limit(1000).Find(&open).Error; err != nil {
		return 0, err
	}
	n, ro := 0, &roster{s: s}
	for i := range open {
		fired, err := s.escalate(ctx, &open[i], ro)
		n += fired
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// escalate fires r's steps for as long as the next is due or finds every
// eligible approver away, and says how many fired. A step raced by another
// process, a decision or an edit is left (the next sweep looks again).
func (s *Store) escalate(ctx context.Context, r *models.Request, ro *roster) (int, error) {
	n := 0
	for r.Open() {
		i, at, ok := r.NextEscalation()
		if !ok {
			return n, nil
		}
		now := s.now()
		why := models.EscalatedDue
		if now.Before(at) {
			away, err := ro.allAway(ctx, r, now)
			if err != nil || !away {
				return n, err
			}
			why = models.EscalatedAway
		}
		err := s.fireStep(ctx, r, i, why, now)
		if err == errRaced || models.ErrorCode(err) != models.ECodeInternal {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// fireStep fires step i of r's escalation in one transaction: records it on
// the request (conditional on r's version and step count), audits it and,
// for the last step, decides. r is updated to the committed record.
func (s *Store) fireStep(ctx context.Context, r *models.Request, i int, why string, now time.Time) error {
	step := r.Approvers.Escalate[i]
	e := models.Escalated{Step: i + 1, At: now, Why: why}
	detail := map[string]any{"step": i + 1, "after": step.After, "why": why}
	var option string
	halt, decides := false, false
	if step.To != nil {
		e.Groups = slices.Clone(step.To.Groups)
		detail["groups"] = e.Groups
	} else {
		e.Then = step.Then
		detail["then"] = step.Then
		option, halt, decides = models.EndOption(r, step.Then)
		if decides {
			e.Option, detail["option"] = option, option
		} else {
			detail["outcome"] = "no option denies: the request stays open until its expiry"
		}
	}
	var next *time.Time
	if i+1 < len(r.Approvers.Escalate) {
		t := r.CreatedAt.Add(r.Approvers.Escalate[i+1].Delay())
		next = &t
	}
	escalations := append(slices.Clone(r.Escalations), e)
	var escalated models.Request // the record as the step left it, before any decision
	return s.transactAll(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		res := tx.Model(&models.Request{}).
			Where("id = ? AND version = ? AND status = ? AND escalation_step = ?", r.ID, r.Version, models.StatusOpen, i).
			Updates(map[string]any{"escalation_step": i + 1, "escalate_at": next, "escalations": jsonColumn{escalations},
				"version": r.Version + 1, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return errRaced
		}
		r.EscalationStep, r.EscalateAt, r.Escalations, r.Version, r.UpdatedAt = i+1, next, escalations, r.Version+1, now
		if err := s.audit(tx, r, ActionEscalate, "system", models.ViaEscalation, detail); err != nil {
			return err
		}
		escalated = *r
		if !decides {
			return nil
		}
		d := models.Decision{Version: r.Version, Option: option, By: "system", Via: models.ViaEscalation}
		if halt {
			note := models.HaltNote
			d.Note = &note
		}
		return s.resolve(tx, r, d, "decide")
	}, func() []models.Change {
		chs := []models.Change{changeOf(&escalated, ActionEscalate)}
		if !r.Open() {
			chs = append(chs, changeOf(r, "decide"))
		}
		return chs
	})
}

// roster is who may approve, read once per sweep and only when asked: the
// live operators and their availability.
type roster struct {
	s      *Store
	loaded bool
	ops    []models.Token
	avail  map[string]*models.Availability
}

// allAway reports whether every operator who may approve r now (its groups,
// widened by what has fired; never the person it was filed for) is away.
// With no such operator at all it is true: nobody would ever be told.
func (ro *roster) allAway(ctx context.Context, r *models.Request, now time.Time) (bool, error) {
	if !ro.loaded {
		if err := ro.s.reader(ctx).Where("role = ? AND revoked_at IS NULL", models.RoleOperator).Find(&ro.ops).Error; err != nil {
			return false, err
		}
		avs, err := ro.s.ListAvailability(ctx)
		if err != nil {
			return false, err
		}
		ro.avail = make(map[string]*models.Availability, len(avs))
		for i := range avs {
			ro.avail[avs[i].Operator] = &avs[i]
		}
		ro.loaded = true
	}
	groups := r.EligibleGroups()
	for _, t := range ro.ops {
		if t.Name == r.FiledFor {
			continue
		}
		if len(groups) > 0 && !slices.ContainsFunc(t.Groups, func(g string) bool { return slices.Contains(groups, g) }) {
			continue
		}
		if !ro.avail[t.Name].AwayAt(now) {
			return false, nil
		}
	}
	return true, nil
}
