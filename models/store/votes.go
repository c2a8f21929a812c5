package store

import (
	"slices"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// vote records d as a vote on r (open, at the version d saw, d.Voter eligible)
// in tx. A deny vote, or the required-th vote for one option, resolves r;
// otherwise r stays open at a higher version. Either way the update is
// conditional on r's version, so of two votes on one version only one counts.
func (s *Store) vote(tx *gorm.DB, r *models.Request, d models.Decision) error {
	now := s.now()
	digest := d.Digest // checkDecision held d.Version to r's: this is what the voter saw
	if digest == "" {
		digest = r.ActionDigest()
	}
	votes := append(slices.Clone(r.Votes), models.Vote{By: d.By, Decision: d.Option, Note: d.Note, At: now, Digest: digest})
	standing := models.CountVotes(votes, d.Option, digest)
	detail := map[string]any{"decision": d.Option, "votes": standing, "required": r.Approvers.Required, "digest": digest}
	if d.Note != nil {
		detail["note"] = *d.Note
	}
	if d.Batch != "" {
		detail["batch_id"] = d.Batch
	}
	if d.ChatUser != "" {
		detail["chat_user"] = d.ChatUser
	}
	o, _ := r.Option(d.Option)
	if o.Effect == models.EffectDeny || standing >= r.Approvers.Required {
		if err := s.audit(tx, r, "vote", d.By, d.Via, detail); err != nil {
			return err
		}
		r.Votes = votes
		return s.resolve(tx, r, d, "decide")
	}
	res := tx.Model(&models.Request{}).Where("id = ? AND version = ? AND status = ?", r.ID, r.Version, models.StatusOpen).
		Updates(map[string]any{"version": r.Version + 1, "votes": jsonColumn{votes}, "updated_at": now})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return s.lostRace(tx, r.ID)
	}
	r.Version, r.Votes, r.UpdatedAt = r.Version+1, votes, now
	return s.audit(tx, r, "vote", d.By, d.Via, detail)
}
