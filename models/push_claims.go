package models

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
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

// ClaimPush reports whether this caller is the first to claim requestID's push
// of type typ.
func (s *Store) ClaimPush(ctx context.Context, requestID, typ string) (bool, error) {
	res := s.DB.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&PushClaim{RequestID: requestID, Type: typ, CreatedAt: s.now()})
	return res.RowsAffected == 1, res.Error
}
