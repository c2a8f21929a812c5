package acp

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
)

// Reports of the sessions to Gatehouse go out one at a time, in order (a
// turn's end must not overtake the prompt that began it), from a queue the
// relay never waits on: a full queue drops the report.
const reportQueue = 64

var (
	reportTimeout = 5 * time.Second // one report
	// endGrace bounds the reports still queued when the agent exits: a
	// server that hangs delays the bridge's exit by at most this.
	endGrace = 5 * time.Second
)

// report is one session event on its way to Gatehouse; waiting, when set,
// receives the waiting item the event opened (nil for none, or on failure).
type report struct {
	e       api.SessionEvent
	waiting chan *api.Request
}

// turn is what the bridge keeps of a session's turn in flight: the text of
// the agent's last message so far.
type turn struct {
	msg       strings.Builder
	afterTool bool // a tool call came after the text so far: the next chunk begins a new message
}

// startReports starts the reporter; endReports reports every session named
// ended and waits, up to endGrace, for the queue to drain.
func (b *Bridge) startReports(ctx context.Context) {
	if b.Gatehouse == nil {
		return
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q := make(chan report, reportQueue)
	done := make(chan struct{})
	b.mu.Lock()
	b.reports, b.reportsDone, b.stopReports = q, done, cancel
	b.mu.Unlock()
	go func() {
		defer close(done)
		for r := range q {
			c, cancel := context.WithTimeout(rctx, reportTimeout)
			got, err := b.Gatehouse.SessionEvent(c, r.e)
			cancel()
			var w *api.Request
			if err != nil {
				b.logf("session %s: %s not recorded in Gatehouse: %v", r.e.Session, r.e.Event, err)
			} else {
				w = got.Waiting
			}
			if r.waiting != nil {
				r.waiting <- w
			}
		}
	}()
}

func (b *Bridge) endReports() {
	b.mu.Lock()
	q, done, cancel := b.reports, b.reportsDone, b.stopReports
	if q == nil {
		b.mu.Unlock()
		return
	}
	for id, cwd := range b.sessions {
		b.reportLocked(report{e: b.sessionEvent(id, cwd, "ended")})
	}
	b.reports = nil // later events (the editor's, still arriving) are not reported
	close(q)
	b.mu.Unlock()
	select {
	case <-done:
	case <-time.After(endGrace):
		b.logf("Gatehouse did not take the sessions' last reports within %s", endGrace)
		cancel()
		<-done
	}
	cancel()
}

// sessionEvent is the event of one of the agent's sessions, named as the
// bridge knows it. Called with b.mu held.
func (b *Bridge) sessionEvent(id, cwd, event string) api.SessionEvent {
	agent := b.who.Agent
	if agent == "" {
		agent = "acp"
	}
	return api.SessionEvent{Session: id, Agent: truncate(agent, 32), Event: event, Machine: b.Machine, Cwd: cwd}
}

// reportLocked queues a report without waiting. Called with b.mu held.
func (b *Bridge) reportLocked(r report) {
	if b.reports == nil {
		if r.waiting != nil {
			close(r.waiting)
		}
		return
	}
	select {
	case b.reports <- r:
	default:
		b.logf("session %s: %s not reported: Gatehouse is behind", r.e.Session, r.e.Event)
		if r.waiting != nil {
			close(r.waiting)
		}
	}
}

// promptStarted is a session/prompt from the editor: the session moved on,
// and a new turn begins. Called with b.mu held.
func (b *Bridge) promptStarted(sessionID string) {
	if sessionID == "" {
		return
	}
	b.turns[sessionID] = &turn{}
	b.reportLocked(report{e: b.sessionEvent(sessionID, b.sessions[sessionID], "moved")})
}

// cancelled is a session/cancel from the editor: the session moved on.
func (b *Bridge) cancelled(sessionID string) {
	if sessionID == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reportLocked(report{e: b.sessionEvent(sessionID, b.sessions[sessionID], "moved")})
}

// promptEnded is the agent's answer to a session/prompt: a turn that ended
// other than cancelled (end_turn, max_tokens, max_turn_requests, refusal)
// leaves the session waiting for its person, with the agent's last message;
// a cancelled one was reported moved by the cancel or the prompt that
// followed. Called with b.mu held.
func (b *Bridge) promptEnded(sessionID string, result json.RawMessage) {
	t := b.turns[sessionID]
	delete(b.turns, sessionID)
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if sessionID == "" || t == nil || json.Unmarshal(result, &r) != nil || r.StopReason == "" || r.StopReason == "cancelled" {
		return
	}
	e := b.sessionEvent(sessionID, b.sessions[sessionID], "waiting")
	e.Message = t.msg.String()
	// Only the headless bridge sends the next prompt: behind an editor, the
	// editor does, and the waiting item takes no reply.
	allow := b.Headless && b.WaitReply > 0
	e.CanReply = allow
	rep := report{e: e}
	if allow {
		rep.waiting = make(chan *api.Request, 1)
		b.waits[sessionID] = rep.waiting
	}
	b.reportLocked(rep)
}

// noteUpdate reads a session/update from the agent: the text of its
// messages in the turn in flight, a tool call ending the message before.
func (b *Bridge) noteUpdate(params json.RawMessage) {
	var p struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.turns[p.SessionID]
	if t == nil {
		return // not in a turn: a loaded session's history, say
	}
	switch p.Update.SessionUpdate {
	case "agent_message_chunk":
		if p.Update.Content.Type != "text" {
			return
		}
		if t.afterTool {
			t.msg.Reset()
			t.afterTool = false
		}
		if room := maxDetail - t.msg.Len(); room > 0 {
			t.msg.WriteString(truncate(p.Update.Content.Text, room))
		}
	case "tool_call", "tool_call_update":
		t.afterTool = true
	}
}

// waitingItem is the waiting item the session's last turn opened, once
// Gatehouse answered its report (nil when there is none).
func (b *Bridge) waitingItem(sessionID string) <-chan *api.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := b.waits[sessionID]
	delete(b.waits, sessionID)
	return ch
}

// awaitReply waits up to WaitReply for the operator's answer on the
// waiting item the session's turn opened, and returns it. The wait is the
// server's long poll; it ends early when ctx does or gone closes (the agent
// exited). An item settled any other way, or none opened, gives no reply.
func (b *Bridge) awaitReply(ctx context.Context, sessionID string, gone <-chan struct{}) (string, bool) {
	ch := b.waitingItem(sessionID)
	if ch == nil {
		return "", false
	}
	var w *api.Request
	select {
	case w = <-ch:
	case <-ctx.Done():
	case <-gone:
	}
	if w == nil || !w.AllowAnswer {
		return "", false
	}
	b.logf("session %s waits up to %s for the operator's reply on %s", sessionID, b.WaitReply, w.ID)
	wctx, cancel := context.WithTimeout(ctx, b.WaitReply)
	defer cancel()
	go func() {
		select {
		case <-gone:
			cancel()
		case <-wctx.Done():
		}
	}()
	r, err := b.Gatehouse.WaitSettled(wctx, w.ID)
	if err != nil {
		b.logf("no reply on %s: %v", w.ID, err)
		return "", false
	}
	reply, ok := hookanswer.ReplyOf(r)
	if !ok || r.ID != w.ID {
		b.logf("%s ended %s with no reply to send", w.ID, r.Status)
		return "", false
	}
	return reply, true
}
