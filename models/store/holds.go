package store

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// ReleaseHolds applies the `then` of every open request whose hold window has
// passed, as a decision with decided_via "rule:NAME (window)". A hold whose option
// is no longer offered, or no longer has the effect it had when the hold was set
// (the owner edited the options), lapses: the request stays with the operator. A request already past its expiry is left to Expire.
// Conditional updates make it safe to run in several processes at once, and
// against a concurrent decide. It returns how many it settled and when the next
// window ends (zero when none is pending).
func (s *Store) ReleaseHolds(ctx context.Context) (int, time.Time, error) {
	now := s.now()
	db := s.DB.WithContext(ctx)
	var due []models.Request
	err := db.Where("status = ? AND hold_until IS NOT NULL AND hold_until <= ? AND expires_at > ?", models.StatusOpen, now, now).
		Order("hold_until").Limit(500).Find(&due).Error
	if err != nil {
		return 0, time.Time{}, err
	}
	n := 0
	for i := range due {
		r := &due[i]
		action := "decide"
		err := s.transact(db, func(tx *gorm.DB) error {
			if r.HoldThen == nil || r.HoldRule == nil {
				return errRaced
			}
			if why := holdBroken(r); why != "" {
				action = "edit"
				return s.lapseHold(tx, r, now, why)
			}
			d := models.Decision{Version: r.Version, Option: *r.HoldThen, By: models.ViaRule(*r.HoldRule), Via: models.ViaRuleWindow(*r.HoldRule)}
			return s.resolve(tx, r, d, "decide")
		}, func() (*models.Request, string) { return r, action })
		if err == errRaced || models.ErrorCode(err) != models.ECodeInternal {
			continue // decided, edited or released elsewhere first
		}
		if err != nil {
			return n, time.Time{}, err
		}
		n++
	}
	next, err := s.NextHold(ctx)
	return n, next, err
}

// NextHold returns when the next pending hold window ends; zero when none.
func (s *Store) NextHold(ctx context.Context) (time.Time, error) {
	var next []models.Request
	err := s.DB.WithContext(ctx).Select("hold_until").
		Where("status = ? AND hold_until IS NOT NULL AND expires_at > ?", models.StatusOpen, s.now()).
		Order("hold_until").Limit(1).Find(&next).Error
	if err != nil || len(next) == 0 || next[0].HoldUntil == nil {
		return time.Time{}, err
	}
	return *next[0].HoldUntil, nil
}

// holdBroken says why a held request's `then` may no longer be decided: its
// option is gone, or its effect is not the one the rule chose at hold time
// (a hold stored before effects were recorded has none, and lapses too). ""
// when the option still stands.
func holdBroken(r *models.Request) string {
	o, ok := r.Option(*r.HoldThen)
	switch {
	case !ok:
		return "option " + quote(*r.HoldThen) + " is no longer offered"
	case r.HoldEffect == nil || o.Effect != *r.HoldEffect:
		return "option " + quote(*r.HoldThen) + " no longer has the effect the rule chose"
	}
	return ""
}

// lapseHold drops a hold whose option no longer stands, raising the version:
// the HELD mark the operator saw is gone.
func (s *Store) lapseHold(tx *gorm.DB, r *models.Request, now time.Time, why string) error {
	res := tx.Model(&models.Request{}).Where("id = ? AND version = ? AND status = ?", r.ID, r.Version, models.StatusOpen).
		Updates(map[string]any{"hold_until": nil, "hold_then": nil, "hold_effect": nil, "version": r.Version + 1, "updated_at": now})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return errRaced
	}
	r.HoldUntil, r.HoldThen, r.HoldEffect, r.Version, r.UpdatedAt = nil, nil, nil, r.Version+1, now
	return s.audit(tx, r, "hold_lapsed", models.ViaRule(*r.HoldRule), models.ViaRuleWindow(*r.HoldRule),
		map[string]any{"rule": *r.HoldRule, "why": why})
}

func quote(s string) string { return `"` + s + `"` }
