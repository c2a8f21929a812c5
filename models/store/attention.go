package store

import (
	"context"

	"github.com/gatehousehq/gatehouse/models"
)

// OpenBadgeItems lists up to limit open waiting and review items, oldest
// first: what the push router re-arms its attention grace for at start.
func (s *Store) OpenBadgeItems(ctx context.Context, limit int) ([]models.Request, error) {
	var out []models.Request
	err := s.reader(ctx).Where("status = ? AND kind IN ?", models.StatusOpen, []string{models.KindWaiting, models.KindReview}).
		Order("created_at").Limit(limit).Find(&out).Error
	return out, err
}
