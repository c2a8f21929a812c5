package store

import (
	"context"
	"encoding/json"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// Audit actions of token changes. They belong to no request: request_id is
// empty and version 0.
const (
	ActionTokenCreate = "token_create"
	ActionTokenRevoke = "token_revoke"
)

// ViaCLI marks a change made by a command that opened the database itself.
const ViaCLI = "cli"

// CreateTokenBy is CreateNamedToken that also records who made the token
// (actor, e.g. "operator:alice", and via, api or cli) in the audit chain, in
// the same transaction: a token that exists has its entry. The secret is
// never recorded.
func (s *Store) CreateTokenBy(ctx context.Context, n NewToken, actor, via string) (*models.Token, string, error) {
	return s.createToken(ctx, n, func(tx *gorm.DB, t *models.Token) error {
		return appendAudit(tx, &Audit{Action: ActionTokenCreate, Actor: actor, Via: via, CreatedAt: s.now(),
			Detail: tokenDetail(t)})
	})
}

// RevokeTokenBy is RevokeToken that records each token revoked, and by whom,
// in the audit chain, in the same transaction; the grants it made are revoked
// by actor too.
func (s *Store) RevokeTokenBy(ctx context.Context, idOrName, actor, via string) (int64, error) {
	return s.revokeToken(ctx, idOrName, actor, via, func(tx *gorm.DB, ts []models.Token) error {
		for i := range ts {
			if err := appendAudit(tx, &Audit{Action: ActionTokenRevoke, Actor: actor, Via: via, CreatedAt: s.now(),
				Detail: tokenDetail(&ts[i])}); err != nil {
				return err
			}
		}
		return nil
	})
}

// lockHeadFirst takes the audit head's lock before a transaction that will
// append changes any row, the one order every appender keeps (lockHead).
func lockHeadFirst(tx *gorm.DB, audited bool) error {
	if !audited {
		return nil
	}
	_, err := lockHead(tx)
	return err
}

// tokenDetail is what an audit entry says of a token: never its secret or hash.
func tokenDetail(t *models.Token) string {
	d := map[string]any{"token_id": t.ID, "role": t.Role, "name": t.Name}
	if len(t.Groups) > 0 {
		d["groups"] = t.Groups
	}
	if t.For != "" {
		d["for"] = t.For
	}
	b, _ := json.Marshal(d) // strings and a list of strings always marshal
	return string(b)
}
