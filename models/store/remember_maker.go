package store

import (
	"encoding/json"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// makerLive is the SQL condition, on a remembered row, that the operator who
// made the grant can still decide: a grant lives no longer than the token
// that made it, so one made with a leaked token dies when the token is revoked.
// A row naming its token needs that token live. A row naming none (made by a
// login link's session, or written before grants named their token) is dead
// once an operator token with its maker's name, live when it was made, has
// been revoked: live operator names are unique, so that token, or a session
// it opened, is the only token that can have made it.
const makerLive = "(CASE WHEN remembered.maker_token <> '' " +
	"THEN EXISTS (SELECT 1 FROM tokens WHERE tokens.id = remembered.maker_token AND tokens.revoked_at IS NULL) " +
	"ELSE NOT EXISTS (SELECT 1 FROM tokens WHERE tokens.role = 'operator' AND 'operator:' || tokens.name = remembered.created_by " +
	"AND tokens.created_at <= remembered.created_at AND tokens.revoked_at > remembered.created_at) END)"

// revokeMadeBy revokes, in tx, the live grants the tokens ts (revoked in tx)
// made, each audited as a grant revoke by actor with the token in its detail.
// The filing's check (makerLive) refuses them anyway; revoking them keeps the
// lists and the trail saying so.
func (s *Store) revokeMadeBy(tx *gorm.DB, ts []models.Token, actor, via string) error {
	now := s.now()
	for i := range ts {
		t := &ts[i]
		if t.Role != models.RoleOperator {
			continue // only an operator decides, so only an operator makes grants
		}
		var gs []models.Remembered
		err := tx.Where("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND "+
			"(maker_token = ? OR (maker_token = '' AND created_by = ? AND created_at >= ?))",
			now, t.ID, "operator:"+t.Name, t.CreatedAt).Order("created_at, id").Find(&gs).Error
		if err != nil {
			return err
		}
		for j := range gs {
			g := &gs[j]
			res := tx.Model(&models.Remembered{}).Where("id = ? AND revoked_at IS NULL", g.ID).Updates(map[string]any{"revoked_at": now, "revoked_by": actor})
			if res.Error != nil {
				return res.Error
			}
			d := revokeFields(g)
			d["cause"], d["token_id"] = ActionTokenRevoke, t.ID
			b, _ := json.Marshal(d) // strings and numbers always marshal
			if err := appendAudit(tx, &Audit{Action: ActionRememberRevoke, Actor: actor, Via: via, CreatedAt: now, Detail: string(b)}); err != nil {
				return err
			}
		}
	}
	return nil
}
