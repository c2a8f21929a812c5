package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"gorm.io/gorm"
)

// Audit actions of remembered allows. A creation and a use belong to the
// request decided; a revocation to none (request_id empty, the grant in its
// detail).
const (
	ActionRemember       = "remember"
	ActionRememberRevoke = "remember_revoke"
)

// RememberSpec is what an operator asks to remember with an allow: a scope, a
// duration, and the command pattern ("" for the exact command).
type RememberSpec struct {
	Scope, For, Match string
}

// decideAlso is more for a decision to check and write in its own
// transaction.
type decideAlso struct {
	check func(r *models.Request, voting bool) error
	write func(tx *gorm.DB, r *models.Request) error
}

// DecideRemembering records d as Decide does and stores, in the same
// transaction, the remembered allow spec asks for; with spec nil, the one the
// chosen option declares, if any (its match is always the exact command, as
// the card shows it). It returns the grant stored, or nil. Errors: those of
// Decide, and ECodeInvalid when the choice is not an allow, the request is
// under an approval policy or a pending grant, the scope does not fit it, its
// command cannot be remembered, or the match is not anchored, does not compile
// or does not cover the request's own command.
func (s *Store) DecideRemembering(ctx context.Context, id string, d models.Decision, spec *RememberSpec) (*models.Request, *models.Remembered, error) {
	var g *models.Remembered
	also := &decideAlso{
		check: func(r *models.Request, voting bool) (err error) {
			g, err = s.rememberFor(r, d, spec, voting)
			return err
		},
		write: func(tx *gorm.DB, r *models.Request) error {
			if g == nil {
				return nil
			}
			return s.storeRemembered(tx, r, g)
		},
	}
	r, err := s.decide(ctx, id, d, also)
	if err != nil {
		return nil, nil, err
	}
	return r, g, nil
}

// rememberFor is the grant d would store on r, or nil when it stores none.
func (s *Store) rememberFor(r *models.Request, d models.Decision, spec *RememberSpec, voting bool) (*models.Remembered, error) {
	o, _ := r.Option(d.Option)
	// An option's filer declared what it remembers; the card shows it only
	// where it can be stored (rememberCard), so where it cannot, choosing the
	// option is a plain allow, as the card showed, not a refusal the operator
	// cannot get past.
	declared := spec == nil
	if declared {
		if o.Remember == nil {
			return nil, nil
		}
		spec = &RememberSpec{Scope: o.Remember.Scope, For: o.Remember.For}
	}
	choices := rules.RememberChoices(r.Tool, r.Command)
	if declared && (voting || r.Approvers != nil || r.PendingID != nil || len(choices) == 0 ||
		models.RememberFits(spec.Scope, r.SourceRef) != nil) {
		return nil, nil
	}
	switch {
	case o.Effect != models.EffectAllow:
		return nil, models.Errorf(models.ECodeInvalid, "remember is only for an option whose effect is allow; %q is not one", d.Option)
	case voting || r.Approvers != nil:
		return nil, models.Errorf(models.ECodeInvalid, "this request has an approval policy: its approvers decide each time, so it cannot be remembered")
	case r.PendingID != nil:
		return nil, models.Errorf(models.ECodeInvalid, "a pending grant approves one exact request; it cannot be remembered")
	}
	if err := models.ValidateRemember("remember", spec.Scope, spec.For); err != nil {
		return nil, err
	}
	if err := models.RememberFits(spec.Scope, r.SourceRef); err != nil {
		return nil, err
	}
	if len(choices) == 0 {
		return nil, models.Errorf(models.ECodeInvalid, "this request's command cannot be remembered: it has none, or it is a shell line that hides what runs")
	}
	match := spec.Match
	if match == "" {
		match = choices[0].Match
	}
	// An offered pattern has been compiled and matched against this command
	// by RememberChoices, with the matcher used here; another is checked now.
	// Either way the command is parsed once, not again for the words.
	if !rules.Offered(choices, match) {
		m, err := rules.CompileRemembered(match)
		if err != nil {
			return nil, err
		}
		if !m.Matches(r.Tool, r.Command) {
			return nil, models.Errorf(models.ECodeInvalid, "remember.match %q does not cover this request's own command", match)
		}
	}
	g := &models.Remembered{
		ID: models.NewID("rem_"), Scope: spec.Scope, For: spec.For, Tool: r.Tool, Match: match,
		Words: rules.RememberWordsIn(choices, match), OwnerID: r.OwnerID, Filer: r.CreatedBy,
		RequestID: r.ID, Option: d.Option, CreatedBy: d.By,
	}
	if d.Voter != nil {
		g.MakerToken = d.Voter.TokenID()
	}
	switch spec.Scope {
	case models.ScopeSession:
		g.Session = r.SourceRef["session"]
	case models.ScopeProject:
		g.Cwd = r.SourceRef["cwd"]
	}
	return g, nil
}

// storeRemembered writes g, made by the decision on r, and its audit entry.
func (s *Store) storeRemembered(tx *gorm.DB, r *models.Request, g *models.Remembered) error {
	g.CreatedAt = s.now()
	if dur := models.RememberFor[g.For]; dur > 0 {
		end := g.CreatedAt.Add(dur)
		g.ExpiresAt = &end
	}
	if err := tx.Create(g).Error; err != nil {
		return err
	}
	detail := map[string]any{"grant_id": g.ID, "scope": g.Scope, "for": g.For, "tool": g.Tool, "match": g.Match}
	if g.ExpiresAt != nil {
		detail["expires_at"] = g.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return s.audit(tx, r, ActionRemember, g.CreatedBy, *r.DecidedVia, detail) // resolve set it: the decider's way in
}

// rememberedDecision is the decision a live remembered allow takes on a new
// filing r, or nil. It is read from the database at each filing, so a
// revocation on any replica holds at once; the filing's transaction uses the
// grant only if it is still live then (useRemembered). A request under an
// approval policy or a pending grant is never decided so, and only a plain
// allow (one that saves and remembers nothing more) is picked.
func (s *Store) rememberedDecision(ctx context.Context, r *models.Request) *models.Decision {
	if r.Approvers != nil || r.PendingID != nil || r.Command == "" {
		return nil
	}
	opt := plainAllow(r)
	if opt == "" {
		return nil
	}
	gs, err := liveRemembered(s.reader(ctx), r.OwnerID, r.Tool, s.now())
	if err != nil {
		slog.Error("remembered allows not read; the operator decides", "request", r.ID, "err", err)
		return nil
	}
	var sh *rules.ShellLine // parsed once, by the first grant that needs it
	for i := range gs {
		g := &gs[i]
		if !g.Covers(r) {
			continue
		}
		m, err := rules.CompileRemembered(g.Match)
		if err != nil || !m.MatchesParsed(r.Tool, r.Command, &sh) {
			continue
		}
		d := models.Decision{Version: r.Version, Option: opt, By: g.CreatedBy, Via: models.ViaRemembered, Grant: g.ID}
		if s.checkDecision(r, d, false) != nil {
			return nil
		}
		if s.rememberedRead != nil {
			s.rememberedRead(g.ID)
		}
		return &d
	}
	return nil
}

// plainAllow is r's first allow option that saves and remembers nothing
// beyond this decision, or "".
func plainAllow(r *models.Request) string {
	for _, o := range r.Options {
		if o.Effect == models.EffectAllow && o.Plain() {
			return o.ID
		}
	}
	return ""
}

// useRemembered counts a use of grant id in tx, if it is still live by the
// store's clock; false when it is not (revoked or expired since it was read,
// or its maker's token revoked).
func (s *Store) useRemembered(tx *gorm.DB, id string) (bool, error) {
	now := s.now()
	res, err := hotExec(tx, "UPDATE remembered SET uses = uses + 1, last_used_at = ? WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND "+makerLive, now, id, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ListRemembered returns the remembered allows, newest first (at most 500),
// and the store's clock as it read them, to tell the live ones (a grant whose
// maker's token is revoked is not).
func (s *Store) ListRemembered(ctx context.Context) ([]models.Remembered, time.Time, error) {
	now := s.now()
	var gs []models.Remembered
	err := s.reader(ctx).Select("remembered.*, NOT " + makerLive + " AS maker_revoked").
		Order("created_at DESC, id DESC").Limit(500).Find(&gs).Error
	return gs, now, err
}

// RevokeRemembered ends grant id at once, recording who did it. Revoking a
// grant already revoked answers it unchanged (no second audit entry).
// Errors: ECodeNotFound.
func (s *Store) RevokeRemembered(ctx context.Context, id, actor, via string) (*models.Remembered, error) {
	var g models.Remembered
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockHeadFirst(tx, true); err != nil {
			return err
		}
		if err := tx.Where("id = ?", id).Take(&g).Error; err != nil {
			if notFound(err) {
				return models.Errorf(models.ECodeNotFound, "no remembered allow %s", id)
			}
			return err
		}
		if g.RevokedAt != nil {
			return nil
		}
		now := s.now()
		res := tx.Model(&models.Remembered{}).Where("id = ? AND revoked_at IS NULL", id).Updates(map[string]any{"revoked_at": now, "revoked_by": actor})
		if res.Error != nil {
			return res.Error
		}
		g.RevokedAt, g.RevokedBy = &now, &actor
		return appendAudit(tx, &Audit{Action: ActionRememberRevoke, Actor: actor, Via: via, CreatedAt: now,
			Detail: revokeDetail(&g)})
	})
	if err != nil {
		return nil, err
	}
	return &g, nil
}

// revokeDetail is what the audit says of a revoked grant.
func revokeDetail(g *models.Remembered) string {
	b, _ := json.Marshal(revokeFields(g)) // strings and a number always marshal
	return string(b)
}

func revokeFields(g *models.Remembered) map[string]any {
	return map[string]any{"grant_id": g.ID, "request_id": g.RequestID, "scope": g.Scope, "tool": g.Tool, "match": g.Match, "uses": g.Uses}
}

// liveRemembered reads the live grants of one token and tool, oldest first,
// with the fields a filing's match needs; a grant whose maker's token is
// revoked is not live (makerLive). Hand SQL, as the filing's other
// statements: it runs on every filing of a command no rule decided.
func liveRemembered(db *gorm.DB, owner, tool string, now time.Time) ([]models.Remembered, error) {
	rows, err := db.Statement.ConnPool.QueryContext(db.Statement.Context, bindVars(db,
		"SELECT id, scope, tool, match, session, cwd, owner_id, created_by FROM remembered "+
			"WHERE owner_id = ? AND tool = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND "+makerLive+" ORDER BY created_at, id"),
		owner, tool, now)
	if err != nil {
		return nil, translated(db, err)
	}
	defer rows.Close()
	var gs []models.Remembered
	for rows.Next() {
		var g models.Remembered
		if err := rows.Scan(&g.ID, &g.Scope, &g.Tool, &g.Match, &g.Session, &g.Cwd, &g.OwnerID, &g.CreatedBy); err != nil {
			return nil, err
		}
		gs = append(gs, g)
	}
	return gs, rows.Err()
}
