package store

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// CreatePending files a pending grant: the Grant row and its approval request,
// with their audit rows, in one transaction. Errors: ECodeInvalid; ECodeConflict
// when the pending id is taken. Rules judge the approval like any filing (a rule's
// decision writes its outbox row like any other).
func (s *Store) CreatePending(ctx context.Context, p models.Principal, n models.NewGrant) (*models.Grant, *models.Request, error) {
	if err := n.Normalize(); err != nil {
		return nil, nil, err
	}
	if n.PendingID == "" {
		n.PendingID = strings.ToLower(models.NewID("pnd_"))
	}
	if n.MaxWait == 0 {
		n.MaxWait = models.DefaultPendingWait
	}
	n.MaxWait = min(n.MaxWait, s.MaxExpiry)
	g := &models.Grant{
		PendingID: n.PendingID, Digest: models.Digest(n.Target), OwnerID: p.ID,
		Sandbox: n.Sandbox, Policy: n.Policy, Middleware: n.Middleware,
		Method: n.Method, Host: n.Host, Port: n.Port, Path: n.Path, Query: n.Query, BodySHA256: n.BodySHA256,
		State: models.GrantPending,
	}
	nr := n.ApprovalRequest()
	nr.PendingID = &n.PendingID
	rows := func(tx *gorm.DB, r *models.Request) error {
		g.RequestID, g.CreatedAt, g.ExpiresAt = r.ID, r.CreatedAt, r.ExpiresAt
		if err := tx.Create(g).Error; err != nil {
			return err
		}
		return s.audit(tx, r, "pending", p.Label(), models.ViaAPI, map[string]any{
			"pending_id": g.PendingID, "digest": g.Digest, "sandbox": g.Sandbox, "policy": g.Policy, "middleware": g.Middleware,
		})
	}
	r, _, err := s.createRequest(ctx, p, nr, "", rows)
	if err != nil {
		return nil, nil, err
	}
	// A rule may have decided the approval already; settleGrant stored that.
	g.State = models.SettledState(r)
	slog.Info("pending grant filed", "pending_id", g.PendingID, "digest", g.Digest, "request_id", r.ID,
		"owner", p.Label(), "sandbox", g.Sandbox, "policy", g.Policy, "middleware", g.Middleware,
		"method", g.Method, "host", g.Host, "port", g.Port, "expires_at", g.ExpiresAt)
	return g, r, nil
}

// GetGrant returns owner's grant and its request; ECodeNotFound when owner has
// none with that pending id (whether or not another owner has).
func (s *Store) GetGrant(ctx context.Context, owner, pendingID string) (*models.Grant, *models.Request, error) {
	db := s.DB.WithContext(ctx)
	var g models.Grant
	if err := db.Where("owner_id = ? AND pending_id = ?", owner, pendingID).Take(&g).Error; err != nil {
		if notFound(err) {
			return nil, nil, models.Errorf(models.ECodeNotFound, "no pending grant %s", pendingID)
		}
		return nil, nil, err
	}
	r, err := load(db, g.RequestID)
	if err != nil {
		return nil, nil, err
	}
	return &g, r, nil
}

// ClaimGrant releases exactly one approved, unclaimed, unexpired grant of p
// bound to t, and returns it. Concurrent identical claims race on one
// conditional UPDATE; only the one that changed the row wins.
//
// When none can be released, the newest grant with that digest answers:
// ECodeApprovalPending while it waits for a decision (the grant is returned too),
// ECodeApprovalDenied or ECodeApprovalExpired once (the claim that hears it
// spends the grant, and the grant is returned), and ECodeNoGrant when there is
// no grant or the newest was already spent: the request is then new.
func (s *Store) ClaimGrant(ctx context.Context, p models.Principal, t models.Target) (*models.Grant, error) {
	if err := t.Normalize(); err != nil {
		return nil, err
	}
	digest := models.Digest(t)
	db := s.DB.WithContext(ctx)
	// A lost race re-reads; three rounds settle any interleaving of a decision
	// and other claims, since each round sees a later state.
	for range 3 {
		now := s.now()
		var approved []string
		err := db.Model(&models.Grant{}).
			Where("digest = ? AND owner_id = ? AND state = ? AND claimed_at IS NULL AND expires_at > ?", digest, p.ID, models.GrantApproved, now).
			Order("created_at, pending_id").Limit(8).Pluck("pending_id", &approved).Error
		if err != nil {
			return nil, err
		}
		for _, id := range approved {
			g, won, err := s.spendGrant(db, p, id, models.GrantApproved, now)
			if err != nil {
				return nil, err
			}
			if won {
				slog.Info("pending grant released", "pending_id", g.PendingID, "digest", g.Digest, "request_id", g.RequestID, "owner", p.Label())
				return g, nil
			}
		}
		var g models.Grant
		err = db.Where("digest = ? AND owner_id = ?", digest, p.ID).Order("created_at DESC, pending_id DESC").Take(&g).Error
		if notFound(err) || (err == nil && g.ClaimedAt != nil) {
			break
		}
		if err != nil {
			return nil, err
		}
		r, err := load(db, g.RequestID)
		if err != nil {
			return nil, err
		}
		var code string
		switch g.Status(r, now) {
		case models.GrantPending:
			return &g, models.Errorf(models.ECodeApprovalPending, "the request is still waiting for the operator's decision (pending_id %s)", g.PendingID)
		case models.GrantApproved:
			continue // approved since the first read: claim it next round
		case models.GrantDenied:
			code = models.ECodeApprovalDenied
		default:
			code = models.ECodeApprovalExpired
		}
		spent, won, err := s.spendGrant(db, p, g.PendingID, "", now)
		if err != nil {
			return nil, err
		}
		if !won {
			continue
		}
		slog.Info("pending claim refused", "pending_id", spent.PendingID, "digest", spent.Digest, "request_id", spent.RequestID, "owner", p.Label(), "answer", code)
		if code == models.ECodeApprovalDenied {
			return spent, models.Errorf(code, "the operator denied this request (pending_id %s); do not retry it", spent.PendingID)
		}
		return spent, models.Errorf(code, "the approval for this request expired unused (pending_id %s); do not retry it", spent.PendingID)
	}
	slog.Debug("pending claim matched nothing", "digest", digest, "owner", p.Label())
	return nil, models.Errorf(models.ECodeNoGrant, "no pending grant matches this exact request")
}

// spendGrant sets claimed_at on one unclaimed grant (in state, when state is
// not "") with a conditional UPDATE, and audits it in the same transaction. won
// is false when another claim got there first.
func (s *Store) spendGrant(db *gorm.DB, p models.Principal, pendingID, state string, now time.Time) (g *models.Grant, won bool, err error) {
	var r *models.Request
	err = s.transact(db, func(tx *gorm.DB) error {
		q := tx.Model(&models.Grant{}).Where("owner_id = ? AND pending_id = ? AND claimed_at IS NULL", p.ID, pendingID)
		upd := map[string]any{"claimed_at": now}
		if state == models.GrantApproved {
			q = q.Where("state = ? AND expires_at > ?", models.GrantApproved, now)
			upd["state"] = models.GrantReleased
		}
		res := q.Updates(upd)
		if res.Error != nil || res.RowsAffected != 1 {
			return res.Error
		}
		won = true
		g = &models.Grant{}
		if err := tx.Where("owner_id = ? AND pending_id = ?", p.ID, pendingID).Take(g).Error; err != nil {
			return err
		}
		if r, err = load(tx, g.RequestID); err != nil {
			return err
		}
		action, answer := "release", "released"
		if state != models.GrantApproved {
			action, answer = "claim_refused", g.Status(r, now)
		}
		return s.audit(tx, r, action, p.Label(), models.ViaAPI, map[string]any{"pending_id": g.PendingID, "digest": g.Digest, "answer": answer})
	}, func() (*models.Request, string) {
		if !won || state != models.GrantApproved {
			return nil, "" // nothing changed, or only the grant's audit
		}
		return r, "release"
	})
	if err != nil || !won {
		return nil, false, err
	}
	return g, true, nil
}

// settleGrant mirrors a settled request onto its grant inside the settling
// transaction and adds the grant's pending_id and digest to the audit detail.
func (s *Store) settleGrant(tx *gorm.DB, r *models.Request, detail map[string]any) error {
	if r.PendingID == nil {
		return nil
	}
	var g models.Grant
	if err := tx.Where("owner_id = ? AND pending_id = ?", r.OwnerID, *r.PendingID).Take(&g).Error; err != nil {
		if notFound(err) {
			return nil
		}
		return err
	}
	detail["pending_id"], detail["digest"] = g.PendingID, g.Digest
	return tx.Model(&models.Grant{}).Where("owner_id = ? AND pending_id = ? AND claimed_at IS NULL", g.OwnerID, g.PendingID).Update("state", models.SettledState(r)).Error
}

// logGrant writes the structured line for a settled grant, after its commit.
func (s *Store) logGrant(ctx context.Context, r *models.Request, action string) {
	if r.PendingID == nil {
		return
	}
	g, _, err := s.GetGrant(ctx, r.OwnerID, *r.PendingID)
	if err != nil {
		slog.Error("pending grant log", "err", err)
		return
	}
	by, via := "", ""
	if r.DecidedBy != nil {
		by = *r.DecidedBy
	}
	if r.DecidedVia != nil {
		via = *r.DecidedVia
	}
	slog.Info("pending grant settled", "pending_id", g.PendingID, "digest", g.Digest, "request_id", r.ID,
		"action", action, "status", g.Status(r, s.now()), "decided_by", by, "decided_via", via)
}
