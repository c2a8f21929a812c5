package codexbridge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/codexbridge"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
)

// recordedThread is the thread of the recorded app-server conversations.
const recordedThread = "01a230b4-cacb-7173-b621-6c932a0d3437"

// waitingChange waits for a change to a waiting item that pred accepts.
func waitingChange(t *testing.T, c <-chan models.Change, what string, pred func(*models.Request) bool) *models.Request {
	t.Helper()
	deadline := time.After(guard)
	for {
		select {
		case ch := <-c:
			if ch.Record != nil && ch.Record.Kind == models.KindWaiting && pred(ch.Record) {
				return ch.Record
			}
		case <-deadline:
			t.Fatalf("no change: %s, in %s", what, guard)
		}
	}
}

// threadSession is the thread's session as the operator lists it.
func (g *gatehouse) threadSession(t *testing.T, id string) api.AgentSession {
	t.Helper()
	var list api.AgentSessions
	if err := g.operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no session %s: %+v", id, list.Sessions)
	return api.AgentSession{}
}

func TestBridgeSessions(t *testing.T) {
	t.Run("a completed turn leaves the thread waiting with Codex's last message; the bridge's end ends it", func(t *testing.T) {
		g := newGatehouse(t)
		sub := g.env.Changes.Subscribe(64)
		defer sub.Close()
		s := startSession(t, "appserver-accept.jsonrpc.jsonl", g.bridge)
		s.play(func(e entry) { s.send(e.Msg) })
		w := waitingChange(t, sub.C, "the waiting item opened", func(r *models.Request) bool { return r.Status == models.StatusOpen })
		if w.Detail != "done" || w.SourceRef["session"] != recordedThread || w.SourceRef["agent"] != "codex" || w.SourceRef["cwd"] != "/home/dev/project" {
			t.Fatalf("waiting item: %+v", w)
		}
		s.end()
		got, err := g.operator.Get(context.Background(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaEnded {
			t.Fatalf("after the bridge ended: %+v", got)
		}
		if ss := g.threadSession(t, recordedThread); ss.State != models.SessionEnded || ss.LastMessage != "done" || ss.Agent != "codex" {
			t.Fatalf("session: %+v", ss)
		}
	})
	t.Run("a turn that starts moves the thread on", func(t *testing.T) {
		g := newGatehouse(t)
		sub := g.env.Changes.Subscribe(64)
		defer sub.Close()
		fromCodexR, fromCodexW := io.Pipe()
		toCodexR, toCodexW := io.Pipe()
		clientInR, clientInW := io.Pipe()
		go func() { _, _ = io.Copy(io.Discard, toCodexR) }()
		b := &codexbridge.Bridge{Gatehouse: g.bridge, ExpiresIn: 600}
		relayed := make(chan error, 1)
		go func() { relayed <- b.Relay(context.Background(), clientInR, io.Discard, toCodexW, fromCodexR) }()
		codex := func(method string, params any) {
			t.Helper()
			msg, _ := json.Marshal(map[string]any{"method": method, "params": params})
			if _, err := fromCodexW.Write(append(msg, '\n')); err != nil {
				t.Fatal(err)
			}
		}
		turn := func(status string, items ...any) map[string]any {
			return map[string]any{"threadId": "th_1", "turn": map[string]any{"id": "tu_1", "items": append([]any{}, items...), "status": status}}
		}
		codex("thread/started", map[string]any{"thread": map[string]any{"id": "th_1", "cwd": "/home/dev/app"}})
		codex("turn/started", turn("inProgress"))
		codex("item/completed", map[string]any{"threadId": "th_1", "turnId": "tu_1", "completedAtMs": 1, "item": map[string]any{"type": "agentMessage", "id": "m1", "text": "Which branch?"}})
		codex("turn/completed", map[string]any{"threadId": "th_1", "turn": map[string]any{"id": "tu_1", "items": []any{}, "itemsView": "notLoaded", "status": "completed"}})
		w := waitingChange(t, sub.C, "the waiting item opened", func(r *models.Request) bool { return r.Status == models.StatusOpen })
		if w.Detail != "Which branch?" || w.SourceRef["session"] != "th_1" || w.Title != "Codex is waiting for you in app" {
			t.Fatalf("waiting item: %+v", w)
		}
		codex("turn/started", turn("inProgress"))
		moved := waitingChange(t, sub.C, "the waiting item settled", func(r *models.Request) bool { return r.ID == w.ID && !r.Open() })
		if moved.DecidedVia == nil || *moved.DecidedVia != models.ViaMovedOn {
			t.Fatalf("after the next turn started: %+v", moved)
		}
		if ss := g.threadSession(t, "th_1"); ss.State != models.SessionWorking {
			t.Fatalf("session: %+v", ss)
		}
		clientInW.Close()
		fromCodexW.Close()
		if err := testkit.Recv(t, relayed, "the relay to end"); err != nil {
			t.Fatal(err)
		}
		if ss := g.threadSession(t, "th_1"); ss.State != models.SessionEnded {
			t.Fatalf("after the bridge ended: %+v", ss)
		}
	})
}
