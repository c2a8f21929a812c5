package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ActionReview is the action of a change that writes a request's review: it
// raises no version (a review is server-assigned, like a forward's state).
const ActionReview = "review"

// ActionRequire is the action of a change where a review routed the request to
// a require rule's policy (which may escalate): the escalation sweeper arms for
// it as for a filing.
const ActionRequire = "require"

// ReviewDay is one UTC day of the advisory reviewer's spending: the tokens
// every review of that day cost, checked against the daily cap before each
// call, and shown on the System page.
type ReviewDay struct {
	Day       string `gorm:"primaryKey;size:10"` // 2006-01-02, UTC
	Reviews   int64  `gorm:"not null;default:0"`
	NoOpinion int64  `gorm:"not null;default:0"`
	TokensIn  int64  `gorm:"not null;default:0"`
	TokensOut int64  `gorm:"not null;default:0"`
}

// Reviewable reports whether r is a request the reviewer reads: open, left to
// a person, and asking for an action (an option that allows). Informational
// kinds and plain questions carry no action to weigh.
func Reviewable(r *models.Request) bool {
	if !r.Open() || models.Silent(r.Kind) {
		return false
	}
	for _, o := range r.Options {
		if o.Effect == models.EffectAllow {
			return true
		}
	}
	return false
}

// ClaimReview marks r's review pending for its current digest, so one replica
// asks the model once per version. It answers the record as claimed and true,
// or false when there is nothing to ask: r is not reviewable, or a review of
// this digest is pending (younger than stale) or done.
func (s *Store) ClaimReview(ctx context.Context, id, model string, stale time.Duration) (*models.Request, bool, error) {
	var r *models.Request
	claimed := false
	err := s.transact(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		var err error
		if r, err = load(tx, id); err != nil {
			return err
		}
		if !Reviewable(r) {
			return nil
		}
		now := s.now()
		digest := r.ActionDigest()
		if v := r.Review; v != nil && v.Digest == digest && (v.Status != models.ReviewPending || now.Sub(v.At) < stale) {
			return nil
		}
		was, err := reviewText(tx, id)
		if err != nil {
			return err
		}
		claim := &models.Review{Status: models.ReviewPending, Model: model, Digest: digest, At: now}
		text, _ := jsonValue(claim)
		res := tx.Exec("UPDATE requests SET review = ? WHERE id = ? AND status = ? AND version = ? AND COALESCE(review, '') = ?",
			text, id, models.StatusOpen, r.Version, was)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error // another replica claimed it, or it changed: its change asks again
		}
		r.Review, claimed = claim, true
		return nil
	}, func() (*models.Request, string) {
		if !claimed {
			return nil, ""
		}
		return r, ActionReview
	})
	return r, claimed, err
}

// FinishReview stores the reviewer's answer on the request it claimed, when
// the claim still stands (no edit voided it, the request is still open), adds
// its tokens to the day, and judges the request again by the rules that name
// review: a require rule gives it an approval policy (raising the version,
// as any change to what the operator sees does). Nothing here decides.
// It answers the record as it then stands, or nil when the claim had lapsed.
func (s *Store) FinishReview(ctx context.Context, claim *models.Request, v models.Review) (*models.Request, error) {
	var r *models.Request
	var verdict rules.Verdict
	err := s.transact(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		if err := s.countReview(tx, v); err != nil {
			return err
		}
		cur, err := load(tx, claim.ID)
		if err != nil {
			return err
		}
		claimText, _ := jsonValue(claim.Review)
		was, err := reviewText(tx, claim.ID)
		if err != nil || claimText == nil || was != claimText.(string) || !cur.Open() {
			return err // voided by an edit, taken over, or settled: the tokens still count
		}
		v.At = s.now()
		cur.Review = &v
		set := map[string]any{"review": jsonColumn{cur.Review}}
		verdict = s.Rules.Current().EvaluateReview(cur)
		if verdict.Action == rules.RuleRequire {
			pol, err := models.Stricter(verdict.Approvers, cur.Approvers)
			if err != nil || equalJSON(pol, cur.Approvers) {
				verdict = rules.Verdict{} // already as strict: nothing changes
			} else {
				cur.Approvers = pol
				cur.Version++
				cur.UpdatedAt = v.At
				cur.Review.Digest = cur.ActionDigest() // the action it read, now under the policy it routed to
				set["review"] = jsonColumn{cur.Review}
				set["approvers"], set["version"], set["updated_at"] = jsonColumn{pol}, cur.Version, cur.UpdatedAt
				if _, at, ok := cur.NextEscalation(); ok && cur.EscalateAt == nil {
					cur.EscalateAt = &at
					set["escalate_at"] = at
				}
			}
		}
		res := tx.Model(&models.Request{}).Where("id = ? AND status = ? AND version = ?", cur.ID, models.StatusOpen, cur.Version-boolInt(verdict.Action == rules.RuleRequire)).Updates(set)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		detail := map[string]any{"status": v.Status, "model": v.Model, "digest": v.Digest, "tokens_in": v.TokensIn, "tokens_out": v.TokensOut}
		if v.Status == models.ReviewDone {
			detail["risk"], detail["authorised"] = v.Risk, v.Authorised
		} else {
			detail["why"] = v.Why
		}
		if err := s.audit(tx, cur, "review", "reviewer:"+v.Model, "reviewer", detail); err != nil {
			return err
		}
		if verdict.Action == rules.RuleRequire {
			if err := s.auditVerdict(tx, cur, verdict); err != nil {
				return err
			}
		}
		r = cur
		return nil
	}, func() (*models.Request, string) {
		if r == nil {
			return nil, ""
		}
		if verdict.Action == rules.RuleRequire {
			return r, ActionRequire
		}
		return r, ActionReview
	})
	return r, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// reviewText is the review column as stored ("" for none), for a conditional
// write on exactly what was read.
func reviewText(tx *gorm.DB, id string) (string, error) {
	var s *string
	if err := tx.Raw("SELECT review FROM requests WHERE id = ?", id).Scan(&s).Error; err != nil {
		return "", err
	}
	if s == nil {
		return "", nil
	}
	return *s, nil
}

// countReview adds one review's tokens to its UTC day.
func (s *Store) countReview(tx *gorm.DB, v models.Review) error {
	row := ReviewDay{Day: s.now().UTC().Format(time.DateOnly), Reviews: 1, TokensIn: v.TokensIn, TokensOut: v.TokensOut}
	if v.Status != models.ReviewDone {
		row.NoOpinion = 1
	}
	return tx.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "day"}},
		DoUpdates: clause.Assignments(map[string]any{
			"reviews":    gorm.Expr("review_days.reviews + ?", row.Reviews),
			"no_opinion": gorm.Expr("review_days.no_opinion + ?", row.NoOpinion),
			"tokens_in":  gorm.Expr("review_days.tokens_in + ?", row.TokensIn),
			"tokens_out": gorm.Expr("review_days.tokens_out + ?", row.TokensOut),
		}),
	}).Create(&row).Error
}

// ReviewUsage returns the reviewer's spending on the UTC day of at (zero when
// it spent nothing).
func (s *Store) ReviewUsage(ctx context.Context, at time.Time) (ReviewDay, error) {
	day := ReviewDay{Day: at.UTC().Format(time.DateOnly)}
	err := s.reader(ctx).Where("day = ?", day.Day).Limit(1).Find(&day).Error
	return day, err
}

// ReviewDays returns the last n days the reviewer spent tokens on, newest first.
func (s *Store) ReviewDays(ctx context.Context, n int) ([]ReviewDay, error) {
	var rows []ReviewDay
	err := s.reader(ctx).Order("day DESC").Limit(n).Find(&rows).Error
	return rows, err
}
