package store

import (
	"context"
	"strings"
	"time"
)

// PushClaim marks that one server took a request's notification of one type.
// With several replicas every router hears every change; the first to claim
// pushes and the others stay quiet, so a phone gets one alert, not one per
// replica.
type PushClaim struct {
	RequestID string `gorm:"primaryKey;size:40"`
	Type      string `gorm:"primaryKey;size:16"` // alert, clear
	CreatedAt time.Time
}

// ClaimPushes claims the push of type typ for every request in ids in one
// statement and returns the ids this caller was first to claim.
func (s *Store) ClaimPushes(ctx context.Context, ids []string, typ string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	now := s.now()
	values := make([]string, len(ids))
	args := make([]any, 0, 3*len(ids))
	for i, id := range ids {
		values[i] = "(?, ?, ?)"
		args = append(args, id, typ, now)
	}
	// Both databases take ON CONFLICT … RETURNING: only inserted rows come back.
	sql := "INSERT INTO push_claims (request_id, type, created_at) VALUES " + strings.Join(values, ", ") +
		" ON CONFLICT DO NOTHING RETURNING request_id"
	var won []string
	err := s.DB.WithContext(ctx).Raw(sql, args...).Scan(&won).Error
	return won, err
}
