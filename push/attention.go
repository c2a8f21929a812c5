package push

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// TypeAttention is the claim type of a badge-level item's one push: with
// several replicas (and across a restart) one of them sends it, once.
const TypeAttention = "attention"

// maxAttentionHolds caps the badge-level items waiting out their grace: past
// it a new one is shown on the page but never pushed (and the log says so).
const maxAttentionHolds = 10000

// attnHold is a badge-level item (a session's waiting item, a review) waiting
// out the attention grace before it may be pushed.
type attnHold struct {
	id   string
	key  string // the session it belongs to: pushes are coalesced per session
	stop func() bool
}

// attentionKey is what a badge-level item's push is coalesced by: its filer's
// session, or the item alone when it names none.
func attentionKey(rec *models.Request) string {
	if sid := rec.SourceRef["session"]; sid != "" {
		return rec.OwnerID + "\x00" + sid
	}
	return "request\x00" + rec.ID
}

// holdAttention arms rec's grace: it is pushed at CreatedAt+grace if still
// open then. An item already held keeps its timer.
func (r *Router) holdAttention(rec *models.Request) {
	if _, ok := r.attn[rec.ID]; ok {
		return
	}
	if len(r.attn) >= maxAttentionHolds {
		slog.Warn("push: too many waiting items held; this one shows on the page but is not pushed", "id", rec.ID)
		r.cfg.Observe(Event{Name: "attention-dropped", RequestID: rec.ID})
		return
	}
	h := &attnHold{id: rec.ID, key: attentionKey(rec)}
	r.attn[rec.ID] = h
	r.armAttention(h, rec.CreatedAt.Add(r.cfg.AttentionGrace))
	r.cfg.Observe(Event{Name: "attention-held", RequestID: rec.ID})
}

func (r *Router) armAttention(h *attnHold, at time.Time) {
	h.stop = r.after(max(at.Sub(r.cfg.Now()), 0), func(ctx context.Context) { r.attentionDue(ctx, h) })
}

// attentionDue pushes a held item whose grace is over, if it is still open
// and its session had no push within the grace; a session pushed more
// recently waits until a grace after that push.
func (r *Router) attentionDue(ctx context.Context, h *attnHold) {
	if r.attn[h.id] != h {
		return // closed meanwhile
	}
	now := r.cfg.Now()
	if last, ok := r.lastAttn[h.key]; ok && now.Before(last.Add(r.cfg.AttentionGrace)) {
		r.armAttention(h, last.Add(r.cfg.AttentionGrace))
		r.cfg.Observe(Event{Name: "attention-coalesced", RequestID: h.id})
		return
	}
	delete(r.attn, h.id)
	rec, err := r.read(ctx, h.id)
	if err != nil || !rec.Open() {
		return
	}
	if live, err := r.store.HasDevices(ctx); err == nil && !live {
		r.cfg.Observe(Event{Name: "no-devices"})
		return
	}
	if len(r.claim(ctx, []string{h.id}, TypeAttention)) == 0 {
		return
	}
	r.lastAttn[h.key] = now
	r.forgetAttention(now)
	r.sent[h.id] = now // its close sends a clearing update
	m := Message{Type: TypeAlert, Waiting: true, RequestID: h.id, RequestIDs: []string{h.id}, Count: 1, Version: rec.Version,
		Badge: r.openCount(ctx), URL: RequestURL(r.cfg.BaseURL, h.id)}
	reach := r.reachable(ctx)
	recs := []models.Request{*rec}
	r.enqueueTo(ctx, m, func(d models.Device) bool { return anyVotable(d, recs) && reach(d) })
}

// forgetAttention drops the sessions whose last push is a grace old: they
// coalesce nothing any more, and the map stays small.
func (r *Router) forgetAttention(now time.Time) {
	for k, at := range r.lastAttn {
		if !now.Before(at.Add(r.cfg.AttentionGrace)) {
			delete(r.lastAttn, k)
		}
	}
}

// dropAttention forgets a held item that closed before its grace ended:
// nothing was pushed for it, and nothing will be.
func (r *Router) dropAttention(id string) bool {
	h := r.attn[id]
	if h == nil {
		return false
	}
	if h.stop != nil {
		h.stop()
	}
	delete(r.attn, id)
	r.cfg.Observe(Event{Name: "suppressed", RequestID: id})
	return true
}

// rearmAttention holds every open badge-level item the store has, at start
// and whenever announcements may have been missed (a resync, a lagged
// subscription): graces survive a restart and another replica's filing.
func (r *Router) rearmAttention(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	recs, err := r.store.OpenBadgeItems(ctx, maxAttentionHolds)
	if err != nil {
		if ctx.Err() == nil {
			slog.Error("push: open waiting items", "err", err)
		}
		return
	}
	for i := range recs {
		if models.AttentionLevel(recs[i].Kind, recs[i].SourceRef) == models.LevelBadge {
			r.holdAttention(&recs[i])
		}
	}
}

func (r *Router) stopAttention() {
	for _, h := range r.attn {
		if h.stop != nil {
			h.stop()
		}
	}
}
