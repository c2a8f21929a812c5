package store

import (
	"context"
	"encoding/json"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// Audit actions of page sessions. They belong to no request.
const (
	// ActionSessionOpen is a login: a session opened with an operator token
	// (its token_id) or a one-time login link (none).
	ActionSessionOpen = "session_open"
	// ActionSessionEnd is a logout, by the session itself.
	ActionSessionEnd = "session_end"
	// ActionSessionRevoke is a session ended by id (an operator's `session
	// revoke`), by whoever ended it.
	ActionSessionRevoke = "session_revoke"
)

// EndSessionID ends the live session with this id, on every replica's cache
// too, and records who ended it (actor, through via) in the audit chain in
// the same transaction. Errors: ECodeNotFound.
func (s *Store) EndSessionID(ctx context.Context, id, actor, via string) error {
	return s.dropCachedOn(s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		now := s.now()
		var sess models.Session
		if err := tx.Where("id = ? AND expires_at > ?", id, now).Take(&sess).Error; err != nil {
			if notFound(err) {
				return models.Errorf(models.ECodeNotFound, "no live session %q", id)
			}
			return err
		}
		res := tx.Where("hash = ?", sess.Hash).Delete(&models.Session{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.Errorf(models.ECodeNotFound, "no live session %q", id)
		}
		if err := appendAudit(tx, &Audit{Action: ActionSessionRevoke, Actor: actor, Via: via, CreatedAt: now,
			Detail: sessionDetail(&sess)}); err != nil {
			return err
		}
		return s.revoked(tx)
	}))
}

// sessionDetail is what an audit entry says of a session: never its secret,
// its hash or its CSRF token.
func sessionDetail(sess *models.Session) string {
	d := map[string]any{"session_id": sess.ID, "operator": sess.Name}
	if sess.TokenID != "" {
		d["token_id"] = sess.TokenID
	}
	b, _ := json.Marshal(d) // strings always marshal
	return string(b)
}
