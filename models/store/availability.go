package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ActionAvailability is the audit action of an operator's away or quiet-hours change.
const ActionAvailability = "availability"

// GetAvailability returns the operator's availability (zero when never set).
func (s *Store) GetAvailability(ctx context.Context, operator string) (*models.Availability, error) {
	var as []models.Availability
	if err := s.reader(ctx).Where("operator = ?", operator).Limit(1).Find(&as).Error; err != nil {
		return nil, err
	}
	if len(as) == 0 {
		return &models.Availability{Operator: operator}, nil
	}
	return &as[0], nil
}

// ListAvailability returns every operator's availability that was ever set.
func (s *Store) ListAvailability(ctx context.Context) ([]models.Availability, error) {
	var as []models.Availability
	err := s.reader(ctx).Find(&as).Error
	return as, err
}

// SetAway marks the operator p away (until, when not nil) or back, audited.
// Going away escalates at once every request whose eligible approvers are now
// all away. Only an operator may: an agent never sets anyone's availability.
func (s *Store) SetAway(ctx context.Context, p models.Principal, away bool, until *time.Time) (*models.Availability, error) {
	now := s.now()
	if until != nil {
		if !away {
			return nil, models.Errorf(models.ECodeInvalid, "until goes with away: true")
		}
		if !until.After(now) {
			return nil, models.Errorf(models.ECodeInvalid, "until %s has passed", until.UTC().Format(time.RFC3339))
		}
		u := until.UTC().Truncate(time.Microsecond)
		until = &u
	}
	a, err := s.changeAvailability(ctx, p, func(a *models.Availability) map[string]any {
		a.Away, a.AwayUntil = away, until
		d := map[string]any{"away": away}
		if until != nil {
			d["until"] = until.Format(time.RFC3339)
		}
		return d
	})
	if err != nil || !away {
		return a, err
	}
	if _, err := s.EscalateAway(ctx); err != nil {
		// The away mark stands; the requests still escalate at their steps' times.
		slog.Error("escalate on going away", "operator", p.Name, "err", err)
	}
	return a, nil
}

// SetQuietHours sets (q non-nil) or clears the operator p's quiet hours, audited.
func (s *Store) SetQuietHours(ctx context.Context, p models.Principal, q *models.QuietHours) (*models.Availability, error) {
	if q != nil {
		if err := q.Validate(); err != nil {
			return nil, err
		}
	}
	return s.changeAvailability(ctx, p, func(a *models.Availability) map[string]any {
		if q == nil {
			a.QuietHours = models.QuietHours{}
			return map[string]any{"quiet_hours": nil}
		}
		a.QuietHours = *q
		return map[string]any{"quiet_hours": map[string]string{"start": q.QuietStart, "end": q.QuietEnd, "tz": q.QuietTZ}}
	})
}

// changeAvailability applies change to p's row (made when missing) and
// audits what it says changed, in one transaction.
func (s *Store) changeAvailability(ctx context.Context, p models.Principal, change func(a *models.Availability) map[string]any) (*models.Availability, error) {
	if p.Role != models.RoleOperator {
		return nil, models.Errorf(models.ECodeForbidden, "only an operator sets their own availability")
	}
	var a models.Availability
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		var rows []models.Availability
		// The audit head's lock, taken first, serialises this with every other change.
		if err := tx.Where("operator = ?", p.Name).Limit(1).Find(&rows).Error; err != nil {
			return err
		}
		a = models.Availability{Operator: p.Name}
		if len(rows) == 1 {
			a = rows[0]
		}
		detail := change(&a)
		a.UpdatedAt = s.now()
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&a).Error; err != nil {
			return err
		}
		return appendAudit(tx, &Audit{Action: ActionAvailability, Actor: p.Label(), Via: models.ViaAPI, CreatedAt: s.now(), Detail: detailText(detail)})
	})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// detailText is an audit detail as its JSON text.
func detailText(d map[string]any) string {
	b, _ := json.Marshal(d) // strings, booleans and maps of them always marshal
	return string(b)
}
