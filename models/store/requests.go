package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"gorm.io/gorm"
)

// CreateRequest files a request owned by p. With a non-empty idempotency key, a
// retry by the same owner returns the first record and created=false.
//
// The rules in force judge the new record: a hold is stored with it, and an
// approve or deny is decided in the same transaction (audited, forwarded and
// announced like any decision, after the filing's own announcement), and the
// decided record is returned.
func (s *Store) CreateRequest(ctx context.Context, p models.Principal, n models.NewRequest, idemKey string) (r *models.Request, created bool, err error) {
	return s.createRequest(ctx, p, n, idemKey, nil)
}

// createRequest is CreateRequest that also runs rows, when set, in the
// request's own transaction (a pending grant writes its row so).
func (s *Store) createRequest(ctx context.Context, p models.Principal, n models.NewRequest, idemKey string, rows func(tx *gorm.DB, r *models.Request) error) (r *models.Request, created bool, err error) {
	if err := n.Normalize(); err != nil {
		return nil, false, err
	}
	if len(idemKey) > 200 {
		return nil, false, models.Errorf(models.ECodeInvalid, "Idempotency-Key is longer than 200 bytes")
	}
	body := n.Digest()
	db := s.DB.WithContext(ctx)
	// A repeated key is found by the insert's unique index, not by a read
	// before it: every filing of the hook has a key and almost none repeat.
	// A repeat of the same body answers the first record even where a check
	// would now refuse it, so a check that fails asks whether the key was
	// used before (repeatOr).
	if err := checkRuntime(s.reader(ctx), p, n.RuntimeID); err != nil {
		return s.repeatOr(ctx, p, idemKey, body, err)
	}
	now := s.now()
	exp := s.DefaultExpiry
	if n.ExpiresIn > 0 {
		exp = n.ExpiresIn
	}
	if exp > s.MaxExpiry {
		return s.repeatOr(ctx, p, idemKey, body, models.Errorf(models.ECodeInvalid, "expires_in is over the server's maximum of %d seconds", int(s.MaxExpiry.Seconds())))
	}
	r = &models.Request{
		ID: models.NewID("req_"), Kind: n.Kind, Status: models.StatusOpen, Version: 1,
		Title: n.Title, Summary: n.Summary, Detail: n.Detail, Risk: n.Risk,
		Tool: n.Tool, Command: n.Command, Options: n.Options, AllowAnswer: n.AllowAnswer,
		DefaultOption: n.DefaultOption, Source: n.Source, SourceRef: n.SourceRef,
		RuntimeID: n.RuntimeID, PendingID: n.PendingID, OwnerID: p.ID, CreatedBy: p.Label(),
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(exp), ActuationState: models.ActuationNone,
		Sealed: !n.Unsealed,
	}
	if r.Options == nil {
		r.Options = []models.Option{}
	}
	if idemKey != "" {
		r.IdempotencyKey, r.FilingDigest = &idemKey, body
	}
	r.FiledFor = p.For
	v := s.Rules.Current().Evaluate(r)
	if r.Approvers, err = models.Stricter(v.Approvers, n.Approvers); err != nil {
		return s.repeatOr(ctx, p, idemKey, body, err)
	}
	v = v.UnderPolicy(r)
	v.Hold(r, now)
	if _, at, ok := r.NextEscalation(); ok {
		r.EscalateAt = &at // from filing time: an edit never moves it
	}
	rule := s.ruleDecision(r, v)
	if rule == nil && v.Rule == "" { // no rule spoke: a remembered allow may
		rule = s.rememberedDecision(ctx, r)
	}
	if rule != nil {
		rule.Digest = r.ActionDigest() // outside the one writer's turn
	}
	var filed *models.Request // the record as filed, when the rule's decision follows it
	err = s.transactAll(db, func(tx *gorm.DB) error {
		if err := insertRequest(tx, r); err != nil {
			return err
		}
		if err := s.audit(tx, r, "create", p.Label(), models.ViaAPI, nil); err != nil {
			return err
		}
		if rows != nil {
			if err := rows(tx, r); err != nil {
				return err
			}
		}
		if err := s.auditVerdict(tx, r, v); err != nil {
			return err
		}
		if rule == nil {
			return nil
		}
		if rule.Grant != "" {
			if live, err := s.useRemembered(tx, rule.Grant); err != nil || !live {
				rule = nil // revoked or expired since it was read: the operator decides
				return err
			}
		}
		f := *r
		filed = &f
		return s.resolve(tx, r, *rule, "decide")
	}, func() []models.Change {
		if filed == nil {
			return []models.Change{changeOf(r, "create")}
		}
		return []models.Change{changeOf(filed, "create"), changeOf(r, "decide")}
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		if idemKey != "" {
			// A repeat, or a concurrent retry that won the insert: answer
			// with the first record.
			if first, ferr := s.byIdempotencyKey(db, p.ID, idemKey); ferr == nil {
				return sameBody(first, body)
			}
		}
		if n.PendingID != nil {
			return nil, false, models.Errorf(models.ECodeConflict, "pending_id %q is already in use", *n.PendingID)
		}
	}
	if err != nil {
		return nil, false, err
	}
	if rule != nil {
		s.logGrant(ctx, r, "decide")
	}
	if r.Open() && r.EscalateAt != nil {
		// Every approver may be away already: escalate now, not at the first step.
		if _, err := s.escalate(ctx, r, &roster{s: s}); err != nil {
			slog.Error("escalate at filing", "id", r.ID, "err", err)
		}
	}
	return r, true, nil
}

// repeatOr answers a filing that failed with err: when key was used before,
// the record it filed first (sameBody), else err.
func (s *Store) repeatOr(ctx context.Context, p models.Principal, key, body string, err error) (*models.Request, bool, error) {
	if key != "" {
		if first, ferr := s.byIdempotencyKey(s.reader(ctx), p.ID, key); ferr == nil {
			return sameBody(first, body)
		} else if !notFound(ferr) {
			return nil, false, ferr
		}
	}
	return nil, false, err
}

// sameBody answers a repeated key: the first record when the filing is the
// same, else models.ECodeKeyReused. Whoever holds the key (an agent that guessed a
// hook's key) cannot make another filing answer with its record.
func sameBody(first *models.Request, body string) (*models.Request, bool, error) {
	if first.FilingDigest != body {
		return nil, false, models.Errorf(models.ECodeKeyReused, "this Idempotency-Key was used for a different request; a key names one filing: use a new key for a new request")
	}
	return first, false, nil
}

func (s *Store) byIdempotencyKey(db *gorm.DB, owner, key string) (*models.Request, error) {
	var r models.Request
	err := db.Where("owner_id = ? AND idempotency_key = ?", owner, key).Take(&r).Error
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// GetRequest returns one request; ECodeNotFound when there is none.
func (s *Store) GetRequest(ctx context.Context, id string) (*models.Request, error) {
	return load(s.reader(ctx), id)
}

// GetRequests reads the requests with the given ids in one query, in no
// particular order; ids with no request are left out.
func (s *Store) GetRequests(ctx context.Context, ids []string) ([]models.Request, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []models.Request
	err := s.reader(ctx).Where("id IN ?", ids).Find(&rows).Error
	return rows, err
}

// ListFilter selects requests for a list.
type ListFilter struct {
	Status  string // open, resolved, expired, dismissed, cancelled, or all
	Kind    string
	Risk    string
	OwnerID string // when set, only that owner's requests
	Limit   int
	Cursor  string
}

var listStatuses = map[string]bool{"all": true, models.StatusOpen: true, models.StatusResolved: true, models.StatusExpired: true, models.StatusDismissed: true, models.StatusCancelled: true}

// ListRequests returns requests newest first, and a cursor for the next page
// ("" when there is none).
func (s *Store) ListRequests(ctx context.Context, f ListFilter) ([]models.Request, string, error) {
	if f.Status == "" {
		f.Status = models.StatusOpen
	}
	if !listStatuses[f.Status] {
		return nil, "", models.Errorf(models.ECodeInvalid, "status %q is not one of open, resolved, expired, dismissed, cancelled, all", f.Status)
	}
	if f.Kind != "" && !models.Kinds[f.Kind] {
		return nil, "", models.Errorf(models.ECodeInvalid, "kind %q is not a kind of request", f.Kind)
	}
	if f.Risk != "" && !models.Risks[f.Risk] {
		return nil, "", models.Errorf(models.ECodeInvalid, "risk %q is not one of low, medium, high", f.Risk)
	}
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	q := s.reader(ctx).Model(&models.Request{})
	if f.Status != "all" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if f.Risk != "" {
		q = q.Where("risk = ?", f.Risk)
	}
	if f.OwnerID != "" {
		q = q.Where("owner_id = ?", f.OwnerID)
	}
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		q = q.Where("created_at < ? OR (created_at = ? AND id < ?)", at, at, id)
	}
	var rows []models.Request
	if err := q.Order("created_at DESC, id DESC").Limit(f.Limit + 1).Find(&rows).Error; err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		last := rows[len(rows)-1]
		next = encodeCursor(last.CreatedAt, last.ID)
	}
	return rows, next, nil
}

func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + "|" + id))
}

func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if ns, id, ok := strings.Cut(string(b), "|"); ok {
			if n, err := strconv.ParseInt(ns, 10, 64); err == nil {
				return time.Unix(0, n).UTC(), id, nil
			}
		}
	}
	return time.Time{}, "", models.Errorf(models.ECodeInvalid, "cursor %q is not one this server gave", c)
}

// CountOpen returns how many requests are open.
func (s *Store) CountOpen(ctx context.Context) (int64, error) {
	var n int64
	err := s.reader(ctx).Model(&models.Request{}).Where("status = ?", models.StatusOpen).Count(&n).Error
	return n, err
}

// Patch is an owner's edit of an open request; nil fields stay as they are.
type Patch struct {
	Version       int // optional: when non-zero, must match
	Title         *string
	Summary       *string
	Detail        *string
	Options       *[]models.Option
	DefaultOption *string
}

// PatchRequest changes what the operator sees and raises the version.
//
// The rules in force judge the edited request as they judge a filing, so an
// edit cannot turn a rule's outcome into another: a hold follows the edit (set,
// kept, moved to another rule, or lapsed to the operator when nothing holds it
// now; never later than before), and an approve or deny is decided at once
// after the edit commits, through Decide.
func (s *Store) PatchRequest(ctx context.Context, id string, by models.Principal, p Patch) (*models.Request, error) {
	if p.Title == nil && p.Summary == nil && p.Detail == nil && p.Options == nil && p.DefaultOption == nil {
		return nil, models.Errorf(models.ECodeInvalid, "the edit names no field: send title, summary, detail, options or default_option")
	}
	var r *models.Request
	var v rules.Verdict
	unchanged := false
	err := s.transact(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		var err error
		if r, err = load(tx, id); err != nil {
			return err
		}
		if err := s.checkOpen(r); err != nil {
			return err
		}
		if r.PendingID != nil {
			// Gatehouse writes a grant's card from the request it binds; the
			// filer may not reword it.
			return models.Errorf(models.ECodeForbidden, "request %s is a pending grant's approval; it cannot be edited", r.ID)
		}
		if r.Sealed {
			return &models.Error{Code: models.ECodeSealed, Detail: "request " + r.ID + " is sealed: what the operator is shown cannot change after filing", Current: r}
		}
		if p.Version != 0 && p.Version != r.Version {
			return &models.Error{Code: models.ECodeVersionConflict, Detail: fmt.Sprintf("version %d is not the current version %d", p.Version, r.Version), Current: r}
		}
		next := *r
		if p.Title != nil {
			next.Title = *p.Title
		}
		if p.Summary != nil {
			next.Summary = *p.Summary
		}
		if p.Detail != nil {
			next.Detail = *p.Detail
		}
		if p.Options != nil {
			next.Options = *p.Options
		}
		if p.DefaultOption != nil {
			next.DefaultOption = *p.DefaultOption
		}
		if err := models.ValidateContent(next.Title, next.Summary, next.Detail, next.Options, next.DefaultOption, next.Kind, next.AllowAnswer); err != nil {
			return err
		}
		digest := next.ActionDigest()
		if digest == r.ActionDigest() {
			// Nothing the operator sees changes: no version, no audit entry,
			// so an owner cannot keep the operator's version stale.
			unchanged = true
			return errUnchanged
		}
		next.Version++
		next.UpdatedAt = s.now()
		next.EditedAt = &next.UpdatedAt
		next.Review = nil // bound to the digest it read: the edit voids it, and the reviewer asks again
		v = s.Rules.Current().EvaluateEdit(&next)
		lapsed := v.Rehold(&next, r, next.UpdatedAt)
		res := tx.Model(&models.Request{}).Where("id = ? AND version = ? AND status = ?", r.ID, r.Version, models.StatusOpen).
			Select("title", "summary", "detail", "options", "default_option", "version", "updated_at", "edited_at",
				"hold_rule", "hold_until", "hold_then", "hold_effect", "review").UpdateColumns(&next)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return s.lostRace(tx, id)
		}
		was := r
		r = &next
		detail := editDetail(was, r)
		if n := standingVotes(was); n > 0 {
			// The edit voids them: a vote approved the text it was cast on.
			detail["votes_voided"] = n
		}
		if err := s.audit(tx, r, "edit", by.Label(), models.ViaAPI, detail); err != nil {
			return err
		}
		return s.auditRejudge(tx, was, r, v, lapsed)
	}, func() (*models.Request, string) { return r, "edit" })
	if unchanged {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	return s.applyVerdict(ctx, r, v), nil
}

// errUnchanged rolls back an edit that changes nothing.
var errUnchanged = models.Errorf(models.ECodeConflict, "unchanged")

// standingVotes counts r's votes cast on its current digest.
func standingVotes(r *models.Request) int {
	d, n := r.ActionDigest(), 0
	for _, v := range r.Votes {
		if v.Digest == d {
			n++
		}
	}
	return n
}

// checkOpen returns the error for acting on a request that is no longer open.
func (s *Store) checkOpen(r *models.Request) error {
	switch {
	case r.Status == models.StatusResolved:
		return &models.Error{Code: models.ECodeAlreadyDecided, Detail: "the request was already decided", Current: r}
	case r.Status == models.StatusExpired:
		return &models.Error{Code: models.ECodeExpired, Detail: "the request expired", Current: r}
	case r.Status != models.StatusOpen:
		return &models.Error{Code: models.ECodeNotOpen, Detail: "the request was " + r.Status, Current: r}
	case !s.now().Before(r.ExpiresAt):
		return &models.Error{Code: models.ECodeExpired, Detail: "the request expired at " + r.ExpiresAt.Format(time.RFC3339), Current: r}
	}
	return nil
}

// lostRace reloads a request whose conditional update matched nothing and says why.
func (s *Store) lostRace(tx *gorm.DB, id string) error {
	cur, err := load(tx, id)
	if err != nil {
		return err
	}
	if err := s.checkOpen(cur); err != nil {
		return err
	}
	return &models.Error{Code: models.ECodeVersionConflict, Detail: fmt.Sprintf("the request changed; it is now at version %d", cur.Version), Current: cur}
}

// Withdraw retires an open request as cancelled (by its owner, any kind: the
// owner is the one who waited) or dismissed (by an operator; only what
// Request.Dismissable allows, ECodeNotDismissable otherwise: dismissal runs no
// outbox row, so a runtime or waiter would never hear of it as a decision).
func (s *Store) Withdraw(ctx context.Context, id string, by models.Principal, status string) (*models.Request, error) {
	return s.withdraw(ctx, id, by, status, nil)
}

// WithdrawBecause is Withdraw with the filer's reason, kept as the record's
// note and in the audit entry (a bridge says the request was decided
// elsewhere, or that nobody answered in time).
func (s *Store) WithdrawBecause(ctx context.Context, id string, by models.Principal, status, reason string) (*models.Request, error) {
	if err := models.ValidateReason(reason); err != nil {
		return nil, err
	}
	return s.withdraw(ctx, id, by, status, &reason)
}

func (s *Store) withdraw(ctx context.Context, id string, by models.Principal, status string, reason *string) (*models.Request, error) {
	action := map[string]string{models.StatusCancelled: "cancel", models.StatusDismissed: "dismiss"}[status]
	if action == "" {
		return nil, models.Errorf(models.ECodeInvalid, "cannot withdraw as %q", status)
	}
	var r *models.Request
	err := s.transact(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		var err error
		if r, err = load(tx, id); err != nil {
			return err
		}
		if status == models.StatusDismissed && !r.Dismissable() {
			return &models.Error{Code: models.ECodeNotDismissable, Current: r,
				Detail: fmt.Sprintf("this %s gates work (an allow/deny option or a runtime's callback): decide it instead; dismiss retires informational items and plain questions", r.Kind)}
		}
		if r.Status != models.StatusOpen {
			return s.checkOpen(r)
		}
		now := s.now()
		set := map[string]any{"status": status, "updated_at": now, "resolved_at": now}
		if reason != nil {
			set["note"] = *reason
		}
		res := tx.Model(&models.Request{}).Where("id = ? AND version = ? AND status = ?", r.ID, r.Version, models.StatusOpen).
			Updates(set)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return s.lostRace(tx, id)
		}
		r.Status, r.UpdatedAt, r.ResolvedAt = status, now, &now
		detail := map[string]any{}
		if reason != nil {
			r.Note = reason
			detail["reason"] = *reason
		}
		if err := s.settleGrant(tx, r, detail); err != nil {
			return err
		}
		return s.audit(tx, r, action, by.Label(), models.ViaAPI, detail)
	}, func() (*models.Request, string) { return r, action })
	if err != nil {
		return nil, err
	}
	s.logGrant(ctx, r, action)
	return r, nil
}
