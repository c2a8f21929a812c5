package codexbridge

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// The app-server notifications that say what a thread does
// (codex app-server generate-json-schema: ServerNotification.json).
const (
	methodThreadStarted = "thread/started"
	methodTurnStarted   = "turn/started"
	methodTurnCompleted = "turn/completed"
	methodItemCompleted = "item/completed"
)

// agentCodex is the agent name the bridge's sessions are filed under, as
// Codex's hooks file theirs.
const agentCodex = "codex"

// Bounds on reporting a thread's turns: a queue the relay never waits on, and
// one call per event.
const (
	sessionQueue   = 64
	sessionTimeout = 10 * time.Second
)

// sessions reports each Codex thread to Gatehouse as a session: a turn that
// starts moves it on, a turn that completes leaves it waiting with Codex's
// last message, and the bridge's end ends it. Events go out in order, one at
// a time, off the relay's path: a slow or absent Gatehouse never holds a
// message up, and a full queue drops the event (logged).
type sessions struct {
	gh    Gatehouse
	logf  func(format string, args ...any)
	queue chan api.SessionEvent
	done  chan struct{}

	mu     sync.Mutex
	cwd    map[string]string // thread id -> its cwd
	last   map[string]string // thread id -> its last agent message
	active map[string]bool   // threads reported and not yet ended
	closed bool
}

func newSessions(gh Gatehouse, logf func(string, ...any)) *sessions {
	s := &sessions{gh: gh, logf: logf, queue: make(chan api.SessionEvent, sessionQueue), done: make(chan struct{}),
		cwd: map[string]string{}, last: map[string]string{}, active: map[string]bool{}}
	go s.send()
	return s
}

func (s *sessions) send() {
	defer close(s.done)
	for e := range s.queue {
		ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
		_, err := s.gh.SessionEvent(ctx, e)
		cancel()
		if err != nil {
			s.logf("session %s: %s not recorded: %v", e.Session, e.Event, err)
		}
	}
}

// notificationParams is what the bridge reads of the thread and turn
// notifications' params.
type notificationParams struct {
	ThreadID string `json:"threadId"`
	Thread   struct {
		ID  string `json:"id"`
		Cwd string `json:"cwd"`
	} `json:"thread"`
	Turn struct {
		Items []threadItem `json:"items"`
	} `json:"turn"`
	Item threadItem `json:"item"`
}

type threadItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// observe reads one notification from Codex.
func (s *sessions) observe(method string, raw json.RawMessage) {
	switch method {
	case methodThreadStarted, methodTurnStarted, methodTurnCompleted, methodItemCompleted:
	default:
		return
	}
	var p notificationParams
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case methodThreadStarted:
		if p.Thread.ID != "" {
			s.cwd[p.Thread.ID] = p.Thread.Cwd
			s.report(api.SessionEvent{Session: p.Thread.ID, Event: "started"})
		}
	case methodItemCompleted:
		if p.ThreadID != "" && p.Item.Type == "agentMessage" && p.Item.Text != "" {
			s.last[p.ThreadID] = p.Item.Text
		}
	case methodTurnStarted:
		if p.ThreadID != "" {
			s.report(api.SessionEvent{Session: p.ThreadID, Event: "moved"})
		}
	case methodTurnCompleted:
		if p.ThreadID == "" {
			return
		}
		// The turn's own items, when Codex sent them, say its last word.
		for i := len(p.Turn.Items) - 1; i >= 0; i-- {
			if it := p.Turn.Items[i]; it.Type == "agentMessage" && it.Text != "" {
				s.last[p.ThreadID] = it.Text
				break
			}
		}
		s.report(api.SessionEvent{Session: p.ThreadID, Event: "waiting", Message: s.last[p.ThreadID]})
	}
}

// report queues e for the thread, with its cwd; s.mu is held.
func (s *sessions) report(e api.SessionEvent) {
	if s.closed {
		return
	}
	e.Agent, e.Cwd = agentCodex, s.cwd[e.Session]
	s.active[e.Session] = true
	select {
	case s.queue <- e:
	default:
		s.logf("session %s: %s not recorded: too many events queued", e.Session, e.Event)
	}
}

// close ends every thread reported (Codex is gone, and its sessions with it)
// and waits until what was queued is sent.
func (s *sessions) close() {
	s.mu.Lock()
	for id := range s.active {
		s.report(api.SessionEvent{Session: id, Event: "ended"})
	}
	s.closed = true
	close(s.queue)
	s.mu.Unlock()
	<-s.done
}
