package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// maxSessionsListed bounds GET /v1/agent-sessions; maxOpenCounted bounds the
// open requests read to count them per session.
const (
	maxSessionsListed = 500
	maxOpenCounted    = 5000
)

// SessionEvent records what a session of p's reported and settles its waiting
// item: EventWaiting opens one (kind waiting, the last message as its detail)
// or refreshes the open one; EventMoved resolves it with decided_via
// "moved_on", EventEnded with "ended". It returns the session and its waiting
// item (nil when none is open).
//
// The session is p's: its key is p's token and the client's id, so one
// agent's events can reach only waiting items its own session filed, and
// moving on resolves nothing but a waiting item.
func (s *Store) SessionEvent(ctx context.Context, p models.Principal, e models.SessionEvent) (*models.AgentSession, *models.Request, error) {
	if err := e.Validate(); err != nil {
		return nil, nil, err
	}
	if err := checkRuntime(s.reader(ctx), p, e.RuntimeID); err != nil {
		return nil, nil, err
	}
	e.Message = models.CleanText(e.Message, models.MaxDetail)
	e.Prompt = models.CleanText(e.Prompt, models.MaxPromptText)
	if err := s.touchSession(ctx, p, e); err != nil {
		return nil, nil, err
	}
	// A race with another event of the same session (or an operator's answer)
	// is met by reading again: every write is conditional, so each round one
	// of the racing events lands, and a session's events rarely overlap at all.
	for range 16 {
		w, err := s.sessionEvent(ctx, p, e)
		if errors.Is(err, errRaced) || models.ErrorCode(err) == models.ECodeVersionConflict || models.ErrorCode(err) == models.ECodeNotOpen || models.ErrorCode(err) == models.ECodeAlreadyDecided {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		a, err := s.agentSession(s.DB.WithContext(ctx), p.ID, e.Session)
		return a, w, err
	}
	return nil, nil, models.Errorf(models.ECodeConflict, "session %s changed under every try; send the event again", e.Session)
}

// touchSession creates the session or marks it seen, with what the event says
// of it. A session that ended and reports again is live again.
func (s *Store) touchSession(ctx context.Context, p models.Principal, e models.SessionEvent) error {
	now := s.now()
	a := models.AgentSession{OwnerID: p.ID, ID: e.Session, Agent: e.Agent, RuntimeID: e.RuntimeID,
		Machine: e.Machine, Cwd: e.Cwd, Since: now, SeenAt: now, CreatedAt: now}
	set := []string{"seen_at", "agent", "ended"}
	if e.Machine != "" {
		set = append(set, "machine")
	}
	if e.Cwd != "" {
		set = append(set, "cwd")
	}
	if e.RuntimeID != nil {
		set = append(set, "runtime_id")
	}
	shown := false // whether what the Sessions view shows changes
	return s.transactAll(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		var was models.AgentSession
		err := tx.Where("owner_id = ? AND id = ?", p.ID, e.Session).Take(&was).Error
		if err != nil && !notFound(err) {
			return err
		}
		// New, back from ended, or somewhere else; an end is announced as
		// it settles the session.
		shown = err != nil || was.Ended && e.Kind != models.EventEnded ||
			e.Machine != "" && e.Machine != was.Machine || e.Cwd != "" && e.Cwd != was.Cwd
		if err == nil && was.Ended && e.Kind != models.EventEnded {
			set = append(set, "since") // back from ended: its state changes now
		}
		if e.Prompt != "" {
			a.Prompts = append(slices.Clone(was.Prompts), e.Prompt)
			if len(a.Prompts) > models.MaxSessionPrompts {
				a.Prompts = a.Prompts[len(a.Prompts)-models.MaxSessionPrompts:]
			}
			set = append(set, "prompts")
		}
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "owner_id"}, {Name: "id"}},
			DoUpdates: clause.AssignmentColumns(set),
		}).Create(&a).Error
	}, func() []models.Change { return sessionChange(shown) })
}

// sessionChange is the announcement of a session that changed while no
// request did, so a Sessions view on any replica redraws; none when nothing
// it shows changed.
func sessionChange(changed bool) []models.Change {
	if !changed {
		return nil
	}
	return []models.Change{{Action: models.ActionSession}}
}

func (s *Store) agentSession(db *gorm.DB, owner, id string) (*models.AgentSession, error) {
	var a models.AgentSession
	if err := db.Where("owner_id = ? AND id = ?", owner, id).Take(&a).Error; err != nil {
		if notFound(err) {
			return nil, models.Errorf(models.ECodeNotFound, "no session %s", id)
		}
		return nil, err
	}
	return &a, nil
}

// sessionEvent is one try of SessionEvent on the session as read now.
func (s *Store) sessionEvent(ctx context.Context, p models.Principal, e models.SessionEvent) (*models.Request, error) {
	db := s.DB.WithContext(ctx)
	a, err := s.agentSession(db, p.ID, e.Session)
	if err != nil {
		return nil, err
	}
	var w *models.Request // the waiting item, while open
	if a.WaitingID != nil {
		if w, err = load(db, *a.WaitingID); err != nil {
			return nil, err
		}
		if !w.Open() || w.Kind != models.KindWaiting || w.OwnerID != p.ID {
			w = nil
		}
	}
	switch e.Kind {
	case models.EventWaiting:
		if w != nil && e.Message == "" {
			return w, nil // no new message: the open item stands as it is
		}
		if w != nil {
			return w, s.refreshWaiting(db, p, a, w, e)
		}
		return s.openWaiting(ctx, p, a, e)
	case models.EventMoved, models.EventEnded:
		via := models.ViaMovedOn
		if e.Kind == models.EventEnded {
			via = models.ViaEnded
		}
		return nil, s.settleSession(db, p.Label(), a, w, via, e.Kind == models.EventEnded, nil)
	}
	return w, nil // started: touchSession did all
}

// openWaiting files the session's waiting item and points the session at it,
// in one transaction; the pointer is set only where it still names no open
// item, so two Stops at once file one.
func (s *Store) openWaiting(ctx context.Context, p models.Principal, a *models.AgentSession, e models.SessionEvent) (*models.Request, error) {
	n := waitingFiling(a, e, s.waitingExpiry())
	r, _, err := s.createRequest(ctx, p, n, "", func(tx *gorm.DB, r *models.Request) error {
		q := tx.Model(&models.AgentSession{}).Where("owner_id = ? AND id = ?", a.OwnerID, a.ID)
		if a.WaitingID == nil {
			q = q.Where("waiting_id IS NULL")
		} else {
			q = q.Where("waiting_id = ?", *a.WaitingID)
		}
		res := q.Updates(map[string]any{"waiting_id": r.ID, "last_message": e.Message, "since": r.CreatedAt})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return errRaced
		}
		return nil
	})
	return r, err
}

// waitingExpiry is how long a waiting item lives unrefreshed: past the
// session's retirement, which settles it as "retired" first (the sweeper
// retires at most a minute late); the expiry is only the backstop.
func (s *Store) waitingExpiry() time.Duration {
	return min(models.SessionRetireAfter+time.Hour, s.MaxExpiry)
}

// agentNames are the names the hooks' agents go by in a waiting item's title.
var agentNames = map[string]string{"claude-code": "Claude Code", "codex": "Codex"}

// waitingFiling is the waiting item of a session: Gatehouse's own title, the
// last message as the detail and no options; it takes a free-text answer only
// when the reporter can carry one back to the session.
func waitingFiling(a *models.AgentSession, e models.SessionEvent, exp time.Duration) models.NewRequest {
	who := agentNames[a.Agent]
	if who == "" {
		who = models.CleanText(a.Agent, 32)
	}
	title := who + " is waiting for you"
	summary := who + " stopped and waits for your next instruction"
	ref := map[string]string{"session": a.ID, "agent": models.CleanText(a.Agent, 32)}
	if a.Cwd != "" {
		title += " in " + filepath.Base(a.Cwd)
		summary += " in " + a.Cwd
		ref["cwd"] = models.CleanText(a.Cwd, models.MaxRef)
	}
	if a.Machine != "" {
		ref["machine"] = models.CleanText(a.Machine, models.MaxRef)
	}
	return models.NewRequest{
		Kind: models.KindWaiting, Title: models.CleanText(title, models.MaxTitle), Summary: models.CleanText(summary, models.MaxSummary),
		Detail: e.Message, Options: []models.Option{}, AllowAnswer: e.CanReply, SourceRef: ref,
		RuntimeID: a.RuntimeID, ExpiresIn: exp,
	}
}

// refreshWaiting puts the newest last message on the open waiting item (and
// whether its reporter can carry an answer back, which each Stop says anew): a new
// version (an answer given to the message before is refused as a version
// conflict, so no answer meets a message it was not written for) and a new
// expiry, audited as "refresh" by the session's token.
func (s *Store) refreshWaiting(db *gorm.DB, p models.Principal, a *models.AgentSession, w *models.Request, e models.SessionEvent) error {
	now := s.now()
	exp := now.Add(s.waitingExpiry())
	return s.transact(db, func(tx *gorm.DB) error {
		res := tx.Model(&models.Request{}).Where("id = ? AND version = ? AND status = ?", w.ID, w.Version, models.StatusOpen).
			Updates(map[string]any{"detail": e.Message, "allow_answer": e.CanReply, "version": w.Version + 1, "updated_at": now, "expires_at": exp})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return errRaced
		}
		w.Detail, w.AllowAnswer, w.Version, w.UpdatedAt, w.ExpiresAt = e.Message, e.CanReply, w.Version+1, now, exp
		if err := tx.Model(&models.AgentSession{}).Where("owner_id = ? AND id = ?", a.OwnerID, a.ID).
			Update("last_message", e.Message).Error; err != nil {
			return err
		}
		return s.audit(tx, w, "refresh", p.Label(), models.ViaAPI, nil)
	}, func() (*models.Request, string) { return w, "edit" })
}

// settleSession marks the session moved on (or ended) and resolves its open
// waiting item, if any, with via. Nothing else is resolved: w is only ever
// the waiting item the session itself filed.
// With seen set, only a session last seen then is settled (retirement).
func (s *Store) settleSession(db *gorm.DB, by string, a *models.AgentSession, w *models.Request, via string, ended bool, seen *time.Time) error {
	now := s.now()
	if w == nil && a.WaitingID == nil && a.Ended == ended {
		return nil // nothing changes state
	}
	return s.transactAll(db, func(tx *gorm.DB) error {
		q := tx.Model(&models.AgentSession{}).Where("owner_id = ? AND id = ?", a.OwnerID, a.ID)
		if a.WaitingID == nil {
			q = q.Where("waiting_id IS NULL")
		} else {
			q = q.Where("waiting_id = ?", *a.WaitingID)
		}
		if seen != nil {
			q = q.Where("seen_at = ? AND ended = ?", *seen, false)
		}
		res := q.Updates(map[string]any{"waiting_id": nil, "ended": ended, "since": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return errRaced
		}
		if w == nil {
			return nil
		}
		return s.resolve(tx, w, models.Decision{Version: w.Version, By: by, Via: via}, "decide")
	}, func() []models.Change {
		if w == nil {
			return sessionChange(true) // ended, or moved on from an answered item
		}
		return []models.Change{changeOf(w, "decide")}
	})
}

// RetireSessions ends every session that has not reported for
// SessionRetireAfter, resolving its waiting item with decided_via "retired".
// The sweeper runs it; conditional updates make it safe in several processes.
func (s *Store) RetireSessions(ctx context.Context) (int, error) {
	db := s.DB.WithContext(ctx)
	var due []models.AgentSession
	if err := db.Where("ended = ? AND seen_at <= ?", false, s.now().Add(-models.SessionRetireAfter)).
		Order("seen_at").Limit(500).Find(&due).Error; err != nil {
		return 0, err
	}
	n := 0
	for i := range due {
		a := &due[i]
		var w *models.Request
		if a.WaitingID != nil {
			r, err := load(db, *a.WaitingID)
			if err != nil {
				return n, err
			}
			if r.Open() && r.Kind == models.KindWaiting {
				w = r
			}
		}
		err := s.settleSession(db, "system", a, w, models.ViaRetired, true, &a.SeenAt)
		if err == errRaced || (err != nil && models.ErrorCode(err) != models.ECodeInternal) {
			continue // it reported, or was answered, meanwhile
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ListAgentSessions lists the sessions of owner ("" for every owner's), each
// with its state derived now: ended; blocked while a request other than its
// waiting item is open under it; waiting while its waiting item is open; else
// working. Waiting and blocked sessions come first, longest first, then
// working ones, then ended ones, most recent first.
func (s *Store) ListAgentSessions(ctx context.Context, owner string) ([]models.SessionView, error) {
	return s.agentSessionViews(ctx, owner, "")
}

// GetAgentSession is one of owner's sessions as ListAgentSessions shows it
// (ECodeNotFound when there is none).
func (s *Store) GetAgentSession(ctx context.Context, owner, id string) (*models.SessionView, error) {
	list, err := s.agentSessionViews(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, models.Errorf(models.ECodeNotFound, "no session %s", id)
	}
	return &list[0], nil
}

func (s *Store) agentSessionViews(ctx context.Context, owner, id string) ([]models.SessionView, error) {
	db := s.reader(ctx)
	q := db.Model(&models.AgentSession{})
	if owner != "" {
		q = q.Where("owner_id = ?", owner)
	}
	if id != "" {
		q = q.Where("id = ?", id)
	}
	var rows []models.AgentSession
	if err := q.Order("seen_at DESC").Limit(maxSessionsListed).Find(&rows).Error; err != nil {
		return nil, err
	}
	type key struct{ owner, session string }
	type open struct {
		n        int
		blocking *time.Time // the oldest open request that is not a waiting item
		waiting  map[string]time.Time
	}
	opens := map[key]*open{}
	oq := db.Model(&models.Request{}).Select("id, kind, owner_id, source_ref, created_at").Where("status = ?", models.StatusOpen)
	if owner != "" {
		oq = oq.Where("owner_id = ?", owner)
	}
	var reqs []models.Request
	if err := oq.Limit(maxOpenCounted).Find(&reqs).Error; err != nil {
		return nil, err
	}
	for _, r := range reqs {
		sid := r.SourceRef["session"]
		if sid == "" {
			continue
		}
		k := key{r.OwnerID, sid}
		o := opens[k]
		if o == nil {
			o = &open{waiting: map[string]time.Time{}}
			opens[k] = o
		}
		o.n++
		if r.Kind == models.KindWaiting {
			o.waiting[r.ID] = r.CreatedAt
		} else if o.blocking == nil || r.CreatedAt.Before(*o.blocking) {
			at := r.CreatedAt
			o.blocking = &at
		}
	}
	out := make([]models.SessionView, 0, len(rows))
	for _, a := range rows {
		v := models.SessionView{AgentSession: a, State: models.SessionWorking, StateSince: a.Since}
		o := opens[key{a.OwnerID, a.ID}]
		if o != nil {
			v.OpenRequests = o.n
		}
		switch {
		case a.Ended:
			v.State = models.SessionEnded
		case o != nil && o.blocking != nil:
			v.State, v.StateSince = models.SessionBlocked, *o.blocking
		case o != nil && a.WaitingID != nil && !o.waiting[*a.WaitingID].IsZero():
			v.State, v.StateSince = models.SessionWaiting, o.waiting[*a.WaitingID]
		case a.WaitingID != nil:
			// Its waiting item was answered, dismissed or expired: the
			// session works (on the answer) since the change was seen.
			v.StateSince = a.SeenAt
		}
		out = append(out, v)
	}
	rank := map[string]int{models.SessionWaiting: 0, models.SessionBlocked: 0, models.SessionWorking: 1, models.SessionEnded: 2}
	slices.SortStableFunc(out, func(x, y models.SessionView) int {
		if d := rank[x.State] - rank[y.State]; d != 0 {
			return d
		}
		if x.State == models.SessionEnded {
			return y.StateSince.Compare(x.StateSince)
		}
		return x.StateSince.Compare(y.StateSince)
	})
	return out, nil
}

// SessionPrompts returns the user prompts kept for owner's session id, newest
// last; none when there is no such session.
func (s *Store) SessionPrompts(ctx context.Context, owner, id string) ([]string, error) {
	if id == "" {
		return nil, nil
	}
	var a models.AgentSession
	err := s.reader(ctx).Select("prompts").Where("owner_id = ? AND id = ?", owner, id).Limit(1).Find(&a).Error
	return a.Prompts, err
}
