package chat

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehousehq/gatehouse/internal/retry"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// Run posts and edits messages until ctx ends. It routes every open request
// when it starts (a filing announced while no process ran is still posted),
// then wakes on each change the store announces and on a timer set to the
// next retry, never on a poll interval. Which messages are behind is read
// from the outbox against the requests themselves, so a decision committed
// just before a restart is still shown, once.
func (s *Service) Run(ctx context.Context) {
	sub := s.changes.Subscribe(256)
	defer func() { sub.Close() }()
	s.routeOpen(ctx)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-sub.C:
			switch {
			case !ok: // dropped for lagging: resubscribe and look again
				sub = s.changes.Subscribe(256)
				s.routeOpen(ctx)
			case ch.Action == models.ActionResync:
				s.routeOpen(ctx)
			case ch.Action == models.ActionActuation, ch.Action == models.ActionSession:
				continue // what the message shows did not change; a session is no message
			default:
				s.route(ctx, ch.RequestID, ch.Record)
			}
		case <-timer.C:
		}
		s.sweep(ctx)
		timer.Reset(s.sleep(ctx))
	}
}

// routeOpen makes the outbox rows of every open request.
func (s *Service) routeOpen(ctx context.Context) {
	ids, err := s.store.OpenRequestIDs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			slog.Error("chat: open requests", "err", err)
		}
		return
	}
	for _, id := range ids {
		s.route(ctx, id, nil)
	}
}

// route makes the outbox rows of one request in the destinations its routes
// name. A row once made stays, so the message is edited to the end.
func (s *Service) route(ctx context.Context, id string, r *models.Request) {
	if r == nil {
		var err error
		if r, err = s.store.GetRequest(ctx, id); err != nil {
			return
		}
	}
	name := ""
	if rt := s.runtimeOf(ctx, r); rt != nil {
		name = rt.Name
	}
	for _, dest := range s.cfg.RouteOf(r, name) {
		if err := s.store.EnsureChatMessage(ctx, id, dest); err != nil && ctx.Err() == nil {
			slog.Error("chat: outbox", "request", id, "dest", dest, "err", err)
		}
	}
}

// sweep sends every due row, one at a time: chat services rate-limit per
// app, so parallel sends would only meet 429s sooner.
func (s *Service) sweep(ctx context.Context) {
	for ctx.Err() == nil {
		rows, err := s.store.ClaimChatMessages(ctx, s.id, 16, s.Lease)
		if err != nil {
			if ctx.Err() == nil {
				slog.Error("chat: claim", "err", err)
			}
			return
		}
		if len(rows) == 0 {
			return
		}
		for i := range rows {
			s.deliver(ctx, &rows[i])
		}
	}
}

// sleep is how long until the next row is due, at most MaxSleep.
func (s *Service) sleep(ctx context.Context) time.Duration {
	next, err := s.store.NextChatDue(ctx)
	if err != nil || next.IsZero() {
		return s.MaxSleep
	}
	return min(max(next.Sub(s.Now()), 0), s.MaxSleep)
}

// deliver sends one claimed row: a post if the message does not exist yet,
// else an edit of it, and records the outcome.
func (s *Service) deliver(ctx context.Context, m *store.ChatMessage) {
	// A send under way finishes even if a stop begins, and its outcome is
	// recorded: a post whose ts were lost would be posted again.
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	out := s.send(sendCtx, m)
	if _, err := s.store.FinishChatMessage(sendCtx, m, s.id, out); err != nil {
		slog.Error("chat: record send", "request", m.RequestID, "dest", m.Dest, "err", err)
	}
	if s.Sent != nil {
		s.Sent(*m, out)
	}
}

func (s *Service) send(ctx context.Context, m *store.ChatMessage) store.ChatSend {
	r, err := s.store.GetRequest(ctx, m.RequestID)
	if err != nil {
		return store.ChatSend{Failed: true, Error: err.Error()}
	}
	done := store.ChatSend{Sent: true, Version: r.Version, Status: r.Status, Ref: m.Ref, Channel: m.Channel}
	d, ok := s.cfg.destination(m.Dest)
	if !ok { // the destination left the file: nothing more to do there
		return done
	}
	if m.Ref == "" && !r.Open() {
		return done // settled before it was ever posted: no message to show it
	}
	v := newView(r, d.Detail, s.baseURL, s.runtimeName(ctx, r))
	sf := s.surfaceOf(d)
	if m.Ref == "" {
		done.Channel, done.Ref, err = sf.post(ctx, d, v)
	} else {
		err = sf.update(ctx, d, m.Channel, m.Ref, v)
	}
	if err == nil {
		return done
	}
	se := classify(err)
	now := s.Now()
	out := store.ChatSend{Error: se.Msg}
	// Retrying ends at the request's expiry, but a change made near or after
	// it (a decision, the expiry itself) still gets a fair window.
	deadline := m.Deadline
	if floor := r.UpdatedAt.Add(store.MinForwardWindow); floor.After(deadline) {
		deadline = floor
	}
	switch {
	case se.Permanent || !now.Before(deadline):
		out.Failed = true
		slog.Error("chat: gave up", "request", m.RequestID, "dest", m.Dest, "err", se.Msg)
	case se.RetryAfter > 0:
		out.NextAt = now.Add(se.RetryAfter)
	default:
		out.NextAt = now.Add(retry.After(s.Backoff, s.MaxBackoff, m.Attempts+1))
	}
	if !out.Failed && out.NextAt.After(deadline) {
		out.NextAt = deadline
	}
	return out
}

// runtimeOf is the runtime r names, nil when none.
func (s *Service) runtimeOf(ctx context.Context, r *models.Request) *models.Runtime {
	if r.RuntimeID == nil {
		return nil
	}
	rt, err := s.store.GetRuntime(ctx, *r.RuntimeID)
	if err != nil {
		return nil
	}
	return rt
}

// runtimeName is "name (machine)" of the runtime r names, "" when none.
func (s *Service) runtimeName(ctx context.Context, r *models.Request) string {
	rt := s.runtimeOf(ctx, r)
	if rt == nil {
		return ""
	}
	if rt.Machine != "" {
		return rt.Name + " (" + rt.Machine + ")"
	}
	return rt.Name
}
