package store

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// Forward is the durable outbox row of one decision bound for a runtime. It is
// written in the decision's own transaction, so a committed decision always has
// one; (RequestID, Version) is the idempotency key the runtime sees. Sends go to
// the runtime's callback; the same rows are the runtime's pull feed, in Seq order.
type Forward struct {
	ID        uint64 `gorm:"primaryKey;autoIncrement"`
	RequestID string `gorm:"size:40;not null;uniqueIndex:idx_forwards_request_version,priority:1"`
	Version   int    `gorm:"not null;uniqueIndex:idx_forwards_request_version,priority:2"`
	RuntimeID string `gorm:"size:40;not null;uniqueIndex:idx_forwards_runtime_seq,priority:1"`
	Seq       int64  `gorm:"not null;uniqueIndex:idx_forwards_runtime_seq,priority:2"`
	// The decision as it was taken (a decided request never changes again).
	Decision  *string `gorm:"size:64"`
	Answer    *string
	Note      *string
	DecidedAt time.Time `gorm:"not null"`
	// DecidedDigest is the action_digest of the version decided on, so the
	// runtime can check it is what it filed; DecidedVia tells a person from a
	// rule or an expiry default.
	DecidedDigest string `gorm:"size:64;not null;default:''"`
	DecidedVia    string `gorm:"size:200;not null;default:''"`
	// Delivery state: pending, delivered, conflict or failed.
	State         string    `gorm:"size:16;not null;index:idx_forwards_due,priority:1"`
	Attempts      int       `gorm:"not null;default:0"`
	NextAttemptAt time.Time `gorm:"not null;index:idx_forwards_due,priority:2"`
	// Deadline is when retrying stops and the forward is failed.
	Deadline  time.Time `gorm:"not null"`
	LastError string    `gorm:"size:500;not null;default:''"`
	// A process that sends a row claims it until ClaimedUntil; a claim that
	// lapses (the process died) lets another take it over.
	ClaimedBy    string `gorm:"size:64;not null;default:''"`
	ClaimedUntil *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// MinForwardWindow is the least time a forward is retried for, so a decision
// taken at (or by) expiry still gets a fair number of attempts.
const MinForwardWindow = 10 * time.Minute

// writeForward writes the outbox row of a decided request that names a runtime
// and marks its actuation pending, inside the decision's transaction (resolve
// calls it). The version is not raised: actuation is bookkeeping.
func (s *Store) writeForward(tx *gorm.DB, r *models.Request) error {
	if r.RuntimeID == nil || *r.RuntimeID == "" {
		return nil
	}
	// Raising the runtime's sequence takes its row lock until commit, so
	// feed numbers commit in order (see Runtime.Seq).
	res := tx.Model(&models.Runtime{}).Where("id = ?", *r.RuntimeID).UpdateColumn("seq", gorm.Expr("seq + 1"))
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return nil // the runtime is gone; nobody to tell
	}
	var seq int64
	if err := tx.Model(&models.Runtime{}).Where("id = ?", *r.RuntimeID).Pluck("seq", &seq).Error; err != nil {
		return err
	}
	now := s.now()
	decided := now
	if r.ResolvedAt != nil {
		decided = *r.ResolvedAt
	}
	deadline := r.ExpiresAt
	if floor := now.Add(MinForwardWindow); deadline.Before(floor) {
		deadline = floor
	}
	f := &Forward{
		RequestID: r.ID, Version: r.Version, RuntimeID: *r.RuntimeID, Seq: seq,
		Decision: r.Decision, Answer: r.Answer, Note: r.Note, DecidedAt: decided,
		DecidedDigest: deref(r.DecidedDigest), DecidedVia: deref(r.DecidedVia),
		State: models.ActuationPending, NextAttemptAt: now, Deadline: deadline, CreatedAt: now, UpdatedAt: now,
	}
	if err := tx.Create(f).Error; err != nil {
		return err
	}
	if err := tx.Model(&models.Request{}).Where("id = ?", r.ID).
		UpdateColumns(map[string]any{"actuation_state": models.ActuationPending, "attempts": 0}).Error; err != nil {
		return err
	}
	r.ActuationState, r.Attempts = models.ActuationPending, 0
	return nil
}

// withCallback selects pending rows of runtimes that have a callback to send to.
func withCallback(db *gorm.DB) *gorm.DB {
	return db.Model(&Forward{}).Where("state = ? AND runtime_id IN (?)", models.ActuationPending,
		db.Session(&gorm.Session{NewDB: true}).Model(&models.Runtime{}).Select("id").Where("callback_url <> ''"))
}

// NextForwardDue returns when the next pending send becomes due (its retry time,
// or the end of another process's claim), or zero when none is pending. Rows
// of the runtimes in except are left out: a forwarder names those whose sends
// are all in flight, as a finished send wakes it for them anyway.
func (s *Store) NextForwardDue(ctx context.Context, except ...string) (time.Time, error) {
	now := s.now()
	db := s.DB.WithContext(ctx)
	var next time.Time
	var free []Forward
	pending := func() *gorm.DB {
		q := withCallback(db)
		if len(except) > 0 {
			q = q.Where("runtime_id NOT IN ?", except)
		}
		return q
	}
	err := pending().Where("claimed_until IS NULL OR claimed_until < ?", now).Order("next_attempt_at").Limit(1).Find(&free).Error
	if err != nil {
		return next, err
	}
	if len(free) == 1 {
		next = free[0].NextAttemptAt
	}
	var held []Forward
	if err := pending().Where("claimed_until >= ?", now).Order("claimed_until").Limit(1).Find(&held).Error; err != nil {
		return next, err
	}
	if len(held) == 1 {
		at := *held[0].ClaimedUntil
		if held[0].NextAttemptAt.After(at) {
			at = held[0].NextAttemptAt
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, nil
}

// Attempt is the outcome of one send to a callback.
type Attempt struct {
	State      string    // delivered, conflict, failed, or pending to retry at NextAt
	NextAt     time.Time // when State is pending
	HTTPStatus int       // 0 when no answer came
	Error      string    // what went wrong, for the operator
	DeliveryID string
}

// FinishForward records one attempt of a claimed forward: the row, the request's
// actuation (its version unchanged), an audit row and the runtime's health, in
// one transaction, then announces an "actuation" change. It reports false when
// the claim was lost to another process (nothing is written then).
func (s *Store) FinishForward(ctx context.Context, f *Forward, owner string, a Attempt) (bool, error) {
	now := s.now()
	var r *models.Request
	err := s.transact(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		upd := map[string]any{"state": a.State, "attempts": gorm.Expr("attempts + 1"), "last_error": truncate(a.Error, 500),
			"claimed_by": "", "claimed_until": nil, "updated_at": now}
		if a.State == models.ActuationPending {
			upd["next_attempt_at"] = a.NextAt
		}
		res := tx.Model(&Forward{}).Where("id = ? AND claimed_by = ? AND state = ?", f.ID, owner, models.ActuationPending).UpdateColumns(upd)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return errRaced
		}
		var cur Forward
		if err := tx.Where("id = ?", f.ID).Take(&cur).Error; err != nil {
			return err
		}
		*f = cur
		if err := tx.Model(&models.Request{}).Where("id = ?", f.RequestID).
			UpdateColumns(map[string]any{"actuation_state": a.State, "attempts": cur.Attempts}).Error; err != nil {
			return err
		}
		var err error
		if r, err = load(tx, f.RequestID); err != nil {
			return err
		}
		detail := map[string]any{"attempt": cur.Attempts, "result": a.State, "runtime_id": f.RuntimeID, "delivery_id": a.DeliveryID}
		if a.HTTPStatus != 0 {
			detail["http_status"] = a.HTTPStatus
		}
		if a.Error != "" {
			detail["error"] = a.Error
		}
		if a.State == models.ActuationPending {
			detail["next_attempt_at"] = a.NextAt.Format(time.RFC3339Nano)
		}
		if err := s.audit(tx, &models.Request{ID: f.RequestID, Version: f.Version}, "forward", "system", "callback", detail); err != nil {
			return err
		}
		health := map[string]any{"last_result": truncate(resultText(a), 200), "last_result_at": now}
		if a.HTTPStatus != 0 {
			health["last_seen_at"] = now // it answered
		}
		if a.State == models.ActuationDelivered || a.State == models.ActuationConflict {
			health["failures"] = 0 // the runtime answered
		} else {
			health["failures"] = gorm.Expr("failures + 1")
		}
		return tx.Model(&models.Runtime{}).Where("id = ?", f.RuntimeID).UpdateColumns(health).Error
	}, func() (*models.Request, string) { return r, models.ActionActuation })
	if err == errRaced {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// ReleaseForward gives back a claim without counting an attempt (the process is
// stopping), so the next process sends it at once.
func (s *Store) ReleaseForward(ctx context.Context, f *Forward, owner string) error {
	return s.DB.WithContext(ctx).Model(&Forward{}).Where("id = ? AND claimed_by = ?", f.ID, owner).
		UpdateColumns(map[string]any{"claimed_by": "", "claimed_until": nil}).Error
}

func resultText(a Attempt) string {
	if a.Error == "" {
		return a.State
	}
	return a.State + ": " + a.Error
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// DecisionFeed returns up to limit forwards of a runtime after sequence number
// after, in order.
func (s *Store) DecisionFeed(ctx context.Context, runtimeID string, after int64, limit int) ([]Forward, error) {
	var rows []Forward
	err := s.DB.WithContext(ctx).Where("runtime_id = ? AND seq > ?", runtimeID, after).Order("seq").Limit(limit).Find(&rows).Error
	return rows, err
}

// AckFeed marks a runtime's pending forwards up to sequence number upto as
// delivered: a runtime that asks for what comes after N has received N. Each
// acknowledged request's actuation changes and is audited and announced.
func (s *Store) AckFeed(ctx context.Context, runtimeID string, upto int64) error {
	if upto <= 0 {
		return nil
	}
	db := s.DB.WithContext(ctx)
	var rows []Forward
	if err := db.Where("runtime_id = ? AND seq <= ? AND state = ?", runtimeID, upto, models.ActuationPending).Order("seq").Limit(500).Find(&rows).Error; err != nil {
		return err
	}
	now := s.now()
	for _, f := range rows {
		var r *models.Request
		err := s.transact(db, func(tx *gorm.DB) error {
			res := tx.Model(&Forward{}).Where("id = ? AND state = ?", f.ID, models.ActuationPending).
				UpdateColumns(map[string]any{"state": models.ActuationDelivered, "attempts": f.Attempts + 1, "updated_at": now})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return errRaced
			}
			if err := tx.Model(&models.Request{}).Where("id = ?", f.RequestID).
				UpdateColumns(map[string]any{"actuation_state": models.ActuationDelivered, "attempts": f.Attempts + 1}).Error; err != nil {
				return err
			}
			var err error
			if r, err = load(tx, f.RequestID); err != nil {
				return err
			}
			detail := map[string]any{"result": models.ActuationDelivered, "runtime_id": runtimeID, "cursor": f.Seq}
			if err := s.audit(tx, &models.Request{ID: f.RequestID, Version: f.Version}, "forward", "system", "pull", detail); err != nil {
				return err
			}
			return tx.Model(&models.Runtime{}).Where("id = ?", runtimeID).
				UpdateColumns(map[string]any{"last_result": "delivered (pull)", "last_result_at": now, "failures": 0}).Error
		}, func() (*models.Request, string) { return r, models.ActionActuation })
		if err == errRaced {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ForwardOf returns the outbox row of one request version (tests, the page).
func (s *Store) ForwardOf(ctx context.Context, requestID string, version int) (*Forward, error) {
	var f Forward
	err := s.DB.WithContext(ctx).Where("request_id = ? AND version = ?", requestID, version).Take(&f).Error
	if notFound(err) {
		return nil, models.Errorf(models.ECodeNotFound, "no forward of %s version %d", requestID, version)
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
