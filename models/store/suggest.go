package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"gorm.io/gorm"
)

// Audit actions of suggestions. An accept's grant is audited as any
// remembered allow (ActionRemember), by the accepting operator, with the
// suggestion in its detail; both belong to no request.
const ActionSuggestionDismiss = "suggestion_dismiss"

// maxListedSuggestions bounds what GET /v1/suggestions reads and shows.
const maxListedSuggestions = 50

// noteSuggestion keeps, in the decision's transaction, the tally of
// suggestions: an operator's plain allow of a command family in a project
// counts toward proposing its remembered allow, and a denial, an approval
// policy, a rule or a high review on one of its requests taints the family in
// that project for good. Everything else (rules' and grants' decisions,
// expiry, answers) leaves it alone, before any parse of the command.
func (s *Store) noteSuggestion(tx *gorm.DB, r *models.Request, d models.Decision) error {
	cwd := r.SourceRef["cwd"]
	if r.Command == "" || cwd == "" {
		return nil
	}
	o, _ := r.Option(d.Option)
	reason := s.suggestTaint(r, o)
	counts := reason == "" && d.Voter != nil && d.Voter.Role == models.RoleOperator &&
		o.Effect == models.EffectAllow && o.Plain() && r.PendingID == nil
	if reason == "" && !counts {
		return nil
	}
	family, exact, ok := rules.SuggestFamily(r.Tool, r.Command)
	if !ok {
		return nil
	}
	if reason == "" {
		// A rule that spoke of it and left it to the operator (a deferred
		// deny, say) touched it; and a grant only decides what no rule speaks of.
		if v := s.Rules.Current().Evaluate(r); v.Rule != "" {
			reason = "rule " + v.Rule + " matched it"
		}
	}
	now := s.now()
	id := models.SuggestionID(r.OwnerID, cwd, r.Tool, family.Match)
	const insert = "INSERT INTO suggestions (id, owner_id, filer, cwd, tool, family, family_words, exact, exact_words, varied, allows, state, reason, created_at, updated_at) " +
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
	args := []any{id, r.OwnerID, r.CreatedBy, cwd, r.Tool, family.Match, family.Words, exact.Match, exact.Words, false}
	if reason != "" {
		_, err := hotExec(tx, insert+"state = excluded.state, reason = excluded.reason, updated_at = excluded.updated_at WHERE suggestions.state = 'open'",
			append(args, 0, models.SuggestionTainted, reason, now, now)...)
		return err
	}
	var allows int
	err := hotScan(tx, insert+"allows = suggestions.allows + 1, varied = (suggestions.varied OR suggestions.exact <> excluded.exact), updated_at = excluded.updated_at "+
		"WHERE suggestions.state = 'open' RETURNING allows", append(args, 1, models.SuggestionOpen, "", now, now), &allows)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && allows > models.MaxSuggestionIDs) {
		return nil // answered, tainted, or named enough decisions already
	}
	if err != nil {
		return err
	}
	_, err = hotExec(tx, "INSERT INTO suggestion_decisions (suggestion_id, request_id, created_at) VALUES (?, ?, ?)", id, r.ID, now)
	return err
}

// suggestTaint is why r keeps its family from ever being proposed in its
// project, or "": it was denied, it had an approval policy, a rule held it,
// or the reviewer judged it high or critical.
func (s *Store) suggestTaint(r *models.Request, o models.Option) string {
	switch {
	case o.Effect == models.EffectDeny:
		return "a request of it was denied"
	case r.Approvers != nil:
		return "a request of it had an approval policy"
	case r.HoldRule != nil:
		return "rule " + *r.HoldRule + " held a request of it"
	case s.ReviewTouched != nil && s.ReviewTouched(r):
		return "the reviewer judged a request of it high or critical"
	}
	return ""
}

// ListSuggestions returns the remembered allows proposed now, most allows
// first: each open suggestion with at least SuggestAfter allows whose
// requests no rule in force speaks of, no high review touched, and that no
// live grant covers already.
func (s *Store) ListSuggestions(ctx context.Context) ([]models.Suggestion, error) {
	db := s.reader(ctx)
	var gs []models.Suggestion
	err := db.Where("state = ? AND allows >= ?", models.SuggestionOpen, s.suggestAfter()).
		Order("allows DESC, updated_at DESC, id").Limit(maxListedSuggestions).Find(&gs).Error
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	out := gs[:0]
	for i := range gs {
		ok, err := s.proposable(db, &gs[i])
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, gs[i])
		}
	}
	return out, nil
}

func (s *Store) suggestAfter() int {
	if s.SuggestAfter > 0 {
		return s.SuggestAfter
	}
	return models.DefaultSuggestAfter
}

// proposable reads the requests g counts into it and says whether it is
// proposed: none of them is one a rule in force speaks of or the reviewer
// judged high, and no live grant covers the newest already.
func (s *Store) proposable(db *gorm.DB, g *models.Suggestion) (bool, error) {
	var rows []models.SuggestionDecision
	if err := db.Where("suggestion_id = ?", g.ID).Order("created_at DESC, request_id DESC").Find(&rows).Error; err != nil {
		return false, err
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].RequestID
	}
	var rs []models.Request
	if err := db.Where("id IN ?", ids).Find(&rs).Error; err != nil {
		return false, err
	}
	if len(rs) == 0 {
		return false, nil
	}
	byID := map[string]*models.Request{}
	for i := range rs {
		r := &rs[i]
		if v := s.Rules.Current().Evaluate(r); v.Rule != "" || (s.ReviewTouched != nil && s.ReviewTouched(r)) {
			return false, nil
		}
		byID[r.ID] = r
	}
	g.IDs = ids
	newest := byID[ids[0]]
	if newest == nil || newest.Decision == nil {
		return false, nil
	}
	g.Option = *newest.Decision
	live, err := liveRemembered(db, g.OwnerID, g.Tool, s.now())
	if err != nil {
		return false, err
	}
	var sh *rules.ShellLine
	for i := range live {
		if !live[i].Covers(newest) {
			continue
		}
		if m, err := rules.CompileRemembered(live[i].Match); err == nil && m.MatchesParsed(newest.Tool, newest.Command, &sh) {
			return false, nil // the operator remembered it another way already
		}
	}
	return true, nil
}

// proposed reads suggestion id as it is proposed now. Errors: ECodeNotFound
// when there is none or it is not proposed (tainted, too few allows, or no
// longer proposable); ECodeConflict, with the suggestion, once it was
// accepted or dismissed.
func (s *Store) proposed(ctx context.Context, id string) (*models.Suggestion, error) {
	db := s.reader(ctx)
	var g models.Suggestion
	if err := db.Where("id = ?", id).Take(&g).Error; err != nil {
		if notFound(err) {
			return nil, models.Errorf(models.ECodeNotFound, "no suggestion %s", id)
		}
		return nil, err
	}
	switch g.State {
	case models.SuggestionAccepted, models.SuggestionDismissed:
		return &g, models.Errorf(models.ECodeConflict, "suggestion %s was %s already by %s", id, g.State, deref(g.DecidedBy))
	case models.SuggestionOpen:
		if g.Allows >= s.suggestAfter() {
			if ok, err := s.proposable(db, &g); err != nil || ok {
				return &g, err
			}
		}
	}
	return nil, models.Errorf(models.ECodeNotFound, "no suggestion %s is proposed", id)
}

// AcceptSuggestion makes the remembered allow suggestion id proposes, as
// the operator p: the project scope, the suggestion's match, for dur ("":
// models.SuggestFor). The grant and its audit entry (ActionRemember, with the
// suggestion and the decisions it covers) commit with the suggestion's
// acceptance. Errors: those of proposed; ECodeInvalid for a bad duration.
func (s *Store) AcceptSuggestion(ctx context.Context, id string, p models.Principal, via, dur string) (*models.Suggestion, *models.Remembered, error) {
	if dur == "" {
		dur = models.SuggestFor
	}
	if err := models.ValidateRemember("accept", models.ScopeProject, dur); err != nil {
		return nil, nil, err
	}
	g, err := s.proposed(ctx, id)
	if err != nil {
		return g, nil, err
	}
	match, words := g.Grant()
	by := p.Label()
	gr := &models.Remembered{
		ID: models.NewID("rem_"), Scope: models.ScopeProject, For: dur, Tool: g.Tool, Match: match, Words: words,
		OwnerID: g.OwnerID, Filer: g.Filer, Cwd: g.Cwd, RequestID: g.IDs[0], Option: g.Option,
		CreatedBy: by, MakerToken: p.TokenID(),
	}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		now := s.now()
		if err := s.answerSuggestion(tx, g, models.SuggestionAccepted, by, &gr.ID, now); err != nil {
			return err
		}
		gr.CreatedAt = now
		if d := models.RememberFor[dur]; d > 0 {
			end := now.Add(d)
			gr.ExpiresAt = &end
		}
		if err := tx.Create(gr).Error; err != nil {
			return err
		}
		detail := map[string]any{"grant_id": gr.ID, "scope": gr.Scope, "for": gr.For, "tool": gr.Tool, "match": gr.Match,
			"filer": gr.Filer, "cwd": gr.Cwd, "suggestion_id": g.ID, "decisions": g.Allows, "request_ids": g.IDs}
		if gr.ExpiresAt != nil {
			detail["expires_at"] = gr.ExpiresAt.UTC().Format(time.RFC3339)
		}
		return appendAudit(tx, &Audit{Action: ActionRemember, Actor: by, Via: via, CreatedAt: now, Detail: jsonDetail(detail)})
	})
	if err != nil {
		return nil, nil, err
	}
	return g, gr, nil
}

// DismissSuggestion remembers that the operator p refused suggestion id: it
// is never proposed again. Dismissing it again answers it unchanged. Errors:
// those of proposed.
func (s *Store) DismissSuggestion(ctx context.Context, id string, p models.Principal, via string) (*models.Suggestion, error) {
	g, err := s.proposed(ctx, id)
	if g != nil && g.State == models.SuggestionDismissed {
		return g, nil
	}
	if err != nil {
		return g, err
	}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		now := s.now()
		if err := s.answerSuggestion(tx, g, models.SuggestionDismissed, p.Label(), nil, now); err != nil {
			return err
		}
		match, _ := g.Grant()
		return appendAudit(tx, &Audit{Action: ActionSuggestionDismiss, Actor: p.Label(), Via: via, CreatedAt: now, Detail: jsonDetail(map[string]any{
			"suggestion_id": g.ID, "tool": g.Tool, "match": match, "filer": g.Filer, "cwd": g.Cwd, "decisions": g.Allows})})
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// answerSuggestion moves g from open to state in tx, on the condition that it
// is still open: a lost race (another operator answered first) is the
// conflict proposed would have said.
func (s *Store) answerSuggestion(tx *gorm.DB, g *models.Suggestion, state, by string, grant *string, now time.Time) error {
	res := tx.Model(&models.Suggestion{}).Where("id = ? AND state = ?", g.ID, models.SuggestionOpen).
		Updates(map[string]any{"state": state, "decided_by": by, "decided_at": now, "grant_id": grant, "updated_at": now})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		var cur models.Suggestion
		if err := tx.Where("id = ?", g.ID).Take(&cur).Error; err != nil {
			return err
		}
		return models.Errorf(models.ECodeConflict, "suggestion %s was %s already by %s", g.ID, cur.State, deref(cur.DecidedBy))
	}
	g.State, g.DecidedBy, g.DecidedAt, g.GrantID, g.UpdatedAt = state, &by, &now, grant, now
	return nil
}

func jsonDetail(d map[string]any) string {
	b, _ := json.Marshal(d) // strings, numbers and string lists always marshal
	return string(b)
}
