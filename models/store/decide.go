package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehousehq/gatehouse/internal/phase"
	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// Decide records a decision, checking status, expiry, the offered option and
// the version. Errors: ECodeNotFound; ECodeAlreadyDecided, ECodeNotOpen,
// ECodeVersionConflict (with Current); ECodeExpired; ECodeNotOffered;
// ECodeInvalid.
//
// The record is read and checked on the reader pool, outside the writer's
// transaction, so the one writer's turn is the writes alone: every write of a
// decision or a vote is conditional on the version read and on the request
// being open, so any change in between (each bumps the version) makes it match
// nothing, and lostRace reads the request again in the transaction and says
// what happened.
func (s *Store) Decide(ctx context.Context, id string, d models.Decision) (*models.Request, error) {
	return s.decide(ctx, id, d, nil)
}

// decide is Decide; also, when set, checks the record before the write and
// writes its rows in the decision's transaction (a remembered allow).
func (s *Store) decide(ctx context.Context, id string, d models.Decision, also *decideAlso) (*models.Request, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	r, voting, err := s.decisionRecord(ctx, id, d)
	if err != nil {
		return nil, err
	}
	if also != nil {
		if err := also.check(r, voting); err != nil {
			return nil, err
		}
	}
	if s.decideRead != nil {
		s.decideRead(r)
	}
	d.Digest = r.ActionDigest() // outside the one writer's turn
	phase.Mark(phase.Checked)
	err = s.transact(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		if voting {
			return s.vote(tx, r, d)
		}
		if err := s.resolve(tx, r, d, "decide"); err != nil || also == nil {
			return err
		}
		return also.write(tx, r)
	}, func() (*models.Request, string) {
		if r.Open() {
			return r, "vote"
		}
		return r, "decide"
	})
	if err != nil {
		s.open.drop(id) // whatever it holds did not stand
		return nil, err
	}
	if !r.Open() {
		s.logGrant(ctx, r, "decide")
	}
	return r, nil
}

// decisionRecord is the record d is checked against and written on the
// condition of: the one this store committed last when that passes the
// checks (openCache says why a guess is safe), else a fresh read.
func (s *Store) decisionRecord(ctx context.Context, id string, d models.Decision) (r *models.Request, voting bool, err error) {
	if r, ok := s.open.get(id); ok {
		voting = r.Approvers != nil && d.Voter != nil
		if s.checkDecision(r, d, voting) == nil {
			return r, voting, nil
		}
	}
	if r, err = load(s.reader(ctx), id); err != nil {
		return nil, false, err
	}
	voting = r.Approvers != nil && d.Voter != nil
	if err := s.checkDecision(r, d, voting); err != nil {
		return nil, false, err
	}
	return r, voting, nil
}

// checkDecision is everything a decision must pass before it is written: the
// request open, the choice offered, a vote's voter eligible, the version the
// decider saw the current one.
func (s *Store) checkDecision(r *models.Request, d models.Decision, voting bool) error {
	if err := s.checkOpen(r); err != nil {
		return err
	}
	if err := checkChoice(r, d); err != nil {
		return err
	}
	if err := d.CheckBatch(r); err != nil {
		return err
	}
	if voting {
		if err := r.MayChoose(*d.Voter, d.Option); err != nil {
			err.Current = r
			return err
		}
		if r.Approvers.Note == models.NoteRequired && d.Note == nil {
			return &models.Error{Code: models.ECodeNoteRequired, Detail: "this request needs a note with every vote: say why", Current: r}
		}
	}
	if d.Version != r.Version {
		return &models.Error{Code: models.ECodeVersionConflict, Detail: fmt.Sprintf("you saw version %d; the request is at version %d", d.Version, r.Version), Current: r}
	}
	return nil
}

func checkChoice(r *models.Request, d models.Decision) error {
	if d.Option == "" {
		if r.AllowAnswer && d.Answer != nil && *d.Answer != "" {
			return nil
		}
		return models.Errorf(models.ECodeInvalid, "decision is required: one of the offered option ids")
	}
	// The one selection every surface's decision passes: an option id a
	// control Gatehouse drew carried, on the version that control showed.
	if _, err := models.SelectOption(r.Options, models.Choice{Button: d.Option}); err != nil {
		return &models.Error{Code: models.ErrorCode(err), Detail: models.ErrorDetail(err), Current: r}
	}
	if d.Answer != nil && *d.Answer != "" && !r.AllowAnswer {
		return models.Errorf(models.ECodeInvalid, "this request does not take a free-text answer")
	}
	return nil
}

// resolve applies a decision to r with a conditional update on its version,
// settles its grant, audits it and writes its forward outbox row, all in tx:
// every path to a decision goes through here, so none can commit one without
// the rest. A lost race is reported as the current state.
func (s *Store) resolve(tx *gorm.DB, r *models.Request, d models.Decision, action string) error {
	now := s.now()
	var opt *string
	if d.Option != "" {
		o := d.Option
		opt = &o
	}
	// The content fields do not change on a decision and the update is
	// conditional on the version, so this is the digest of the version decided on.
	digest := d.Digest
	if digest == "" {
		digest = r.ActionDigest()
	}
	// Hand SQL: every decision runs this, and building it from a map through
	// GORM's reflection cost as much as SQLite's own work on it.
	q := "UPDATE requests SET decided_digest = ?, status = ?, version = ?, decision = ?, answer = ?, note = ?, decided_by = ?, decided_via = ?, resolved_at = ?, updated_at = ?"
	args := []any{digest, models.StatusResolved, r.Version + 1, opt, d.Answer, d.Note, d.By, d.Via, now, now}
	if r.Approvers != nil {
		q += ", votes = ?"
		args = append(args, jsonColumn{r.Votes})
	}
	if d.Grant != "" {
		q += ", grant_id = ?"
		args = append(args, d.Grant)
	}
	res, err := hotExec(tx, q+" WHERE id = ? AND version = ? AND status = ?", append(args, r.ID, r.Version, models.StatusOpen)...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return s.lostRace(tx, r.ID)
	}
	by, via := d.By, d.Via
	r.Status, r.Version, r.Decision, r.Answer, r.Note = models.StatusResolved, r.Version+1, opt, d.Answer, d.Note
	r.DecidedBy, r.DecidedVia, r.ResolvedAt, r.UpdatedAt = &by, &via, &now, now
	r.DecidedDigest = &digest
	detail := map[string]any{"decision": d.Option}
	if d.Grant != "" {
		g := d.Grant
		r.GrantID = &g
		detail["grant_id"] = g
	}
	if d.Note != nil {
		detail["note"] = *d.Note
	}
	if d.Batch != "" {
		detail["batch_id"] = d.Batch
	}
	if d.ChatUser != "" {
		detail["chat_user"] = d.ChatUser
	}
	if err := s.settleGrant(tx, r, detail); err != nil {
		return err
	}
	if err := s.audit(tx, r, action, d.By, d.Via, detail); err != nil {
		return err
	}
	return s.writeForward(tx, r)
}

// Expire settles every open request whose expiry has passed: with its default
// option as an "expiry" decision, or as expired. Conditional updates make it safe
// to run in several processes at once. It returns how many it settled and the
// next expiry still ahead (zero when none).
func (s *Store) Expire(ctx context.Context) (int, time.Time, error) {
	now := s.now()
	db := s.DB.WithContext(ctx)
	var due []models.Request
	if err := db.Where("status = ? AND expires_at <= ?", models.StatusOpen, now).Order("expires_at").Limit(500).Find(&due).Error; err != nil {
		return 0, time.Time{}, err
	}
	n := 0
	for i := range due {
		r := &due[i]
		action := "expire"
		err := s.transact(db, func(tx *gorm.DB) error {
			if r.DefaultOption != "" && expiryMayDecide(r) {
				return s.resolve(tx, r, models.Decision{Option: r.DefaultOption, By: "system", Via: models.ViaExpiry}, action)
			}
			res := tx.Model(&models.Request{}).Where("id = ? AND version = ? AND status = ?", r.ID, r.Version, models.StatusOpen).
				Updates(map[string]any{"status": models.StatusExpired, "resolved_at": now, "updated_at": now, "decided_via": models.ViaExpiry})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return errRaced
			}
			via := models.ViaExpiry
			r.Status, r.ResolvedAt, r.UpdatedAt, r.DecidedVia = models.StatusExpired, &now, now, &via
			detail := map[string]any{}
			if err := s.settleGrant(tx, r, detail); err != nil {
				return err
			}
			return s.audit(tx, r, action, "system", models.ViaExpiry, detail)
		}, func() (*models.Request, string) { return r, action })
		if err == errRaced || models.ErrorCode(err) != models.ECodeInternal {
			continue // another process or a decide got there first
		}
		if err != nil {
			return n, time.Time{}, err
		}
		n++
		s.logGrant(ctx, r, action)
	}
	var next models.Request
	err := db.Where("status = ?", models.StatusOpen).Order("expires_at").Limit(1).Find(&next).Error
	if err != nil {
		return n, time.Time{}, err
	}
	return n, next.ExpiresAt, nil
}

var errRaced = models.Errorf(models.ECodeConflict, "raced")

// expiryMayDecide: under an approval policy only people allow, so a default
// option that allows is not taken at expiry; the request just expires. A
// default that denies still applies.
func expiryMayDecide(r *models.Request) bool {
	if r.Approvers == nil {
		return true
	}
	o, _ := r.Option(r.DefaultOption)
	return o.Effect == models.EffectDeny
}
