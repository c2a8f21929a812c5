package acp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/client"
)

func init() { *acp.StdinGrace = 200 * time.Millisecond }

// TestRelay runs the bridge between a fake editor and a fake agent (this
// test binary, playing a recorded agent's shapes) against a real Gatehouse.
func TestRelay(t *testing.T) {
	t.Run("the operator's allow reaches the agent as its allow_once option and the editor's prompt is withdrawn", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "claude-agent-acp", s.agent, time.Minute)
		sid := e.start()
		ask := e.prompt(2, sid)
		if ask["id"] != float64(0) {
			t.Fatalf("the agent's request id %v reached the editor changed; want 0, the same as the editor's initialize", ask["id"])
		}
		r := s.filed(t, e.log)
		s.decide(t, r, "allow_once")
		withdrawn := e.expect(acp.MethodCancelRequest)
		if withdrawn["params"].(map[string]any)["requestId"] != float64(0) {
			t.Fatalf("withdrew %v, want request 0", withdrawn)
		}
		if outcome, stop := e.turnEnd(); outcome != "outcome selected allow" || stop != "end_turn" {
			t.Fatalf("agent got %q and ended %q; want Claude's allow option", outcome, stop)
		}
		// The editor's late answer to the withdrawn request is not relayed:
		// the agent would take it for an answer to a request of its own.
		e.send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
		e.log.await(t, "the editor's answer is dropped")
	})

	t.Run("the operator's deny reaches the agent as its reject_once option", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "gemini-cli", s.agent, time.Minute)
		sid := e.start()
		e.prompt(2, sid)
		r := s.filed(t, e.log)
		s.decide(t, r, "reject_once")
		e.expect(acp.MethodCancelRequest)
		if outcome, stop := e.turnEnd(); outcome != "outcome selected cancel" || stop != "end_turn" {
			t.Fatalf("agent got %q and ended %q; want Gemini's reject option", outcome, stop)
		}
	})

	t.Run("the editor answers first: the Gatehouse request is cancelled and the operator can no longer decide it", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "codex-acp", s.agent, time.Minute)
		sid := e.start()
		ask := e.prompt(2, sid)
		r := s.filed(t, e.log)
		e.send(`{"jsonrpc":"2.0","id":` + quote(ask["id"].(string)) + `,"result":{"outcome":{"outcome":"selected","optionId":"approved"}}}`)
		if outcome, stop := e.turnEnd(); outcome != "outcome selected approved" || stop != "end_turn" {
			t.Fatalf("agent got %q and ended %q; want the editor's answer", outcome, stop)
		}
		got := s.settled(t, r.ID)
		if got.Status != "cancelled" || got.Note == nil || *got.Note != "decided in the editor: allow_once" {
			t.Fatalf("the Gatehouse request is %s with note %v; want cancelled, decided in the editor", got.Status, got.Note)
		}
		_, err := s.operator.Decide(context.Background(), r.ID, got.Version, "allow_once", "")
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusConflict {
			t.Fatalf("the operator decided a request the editor answered: %v", err)
		}
		e.log.await(t, "decided in the editor: allow_once")
	})

	t.Run("session/cancel cancels the session's Gatehouse requests and the agent is answered cancelled", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "claude-agent-acp", s.agent, time.Minute)
		sid := e.start()
		e.prompt(2, sid)
		r := s.filed(t, e.log)
		e.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":` + quote(sid) + `}}`)
		if outcome, stop := e.turnEnd(); outcome != "outcome cancelled" || stop != "cancelled" {
			t.Fatalf("agent got %q and ended %q; want cancelled", outcome, stop)
		}
		if got := s.settled(t, r.ID); got.Status != "cancelled" || got.Note == nil || *got.Note != "the editor cancelled the session's turn" {
			t.Fatalf("the Gatehouse request is %s with note %v, want cancelled with the session", got.Status, got.Note)
		}
		// The editor answers cancelled too, as the protocol asks: dropped.
		e.send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`)
		e.log.await(t, "the editor's answer is dropped")
	})

	t.Run("with no decision before the timeout the editor alone decides", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "claude-agent-acp", s.agent, time.Second)
		sid := e.start()
		e.prompt(2, sid)
		r := s.filed(t, e.log)
		e.log.await(t, "the editor decides")
		if got := s.settled(t, r.ID); got.Status != "cancelled" || got.Note == nil || !strings.Contains(*got.Note, "left to the editor") {
			t.Fatalf("the Gatehouse request is %s with note %v after the timeout; want cancelled, left to the editor", got.Status, got.Note)
		}
		// Had the bridge answered the agent, its answer would come first.
		e.send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
		if outcome, _ := e.turnEnd(); outcome != "outcome selected reject" {
			t.Fatalf("agent got %q; want the editor's answer alone", outcome)
		}
	})

	t.Run("with Gatehouse down the editor alone decides", func(t *testing.T) {
		e := attach(t, "gemini-cli", client.New(deadURL(t), "any"), time.Minute)
		sid := e.start()
		e.prompt(2, sid)
		e.log.await(t, "the editor decides")
		e.send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}}`)
		if outcome, _ := e.turnEnd(); outcome != "outcome selected proceed_once" {
			t.Fatalf("agent got %q; want the editor's answer alone", outcome)
		}
	})

	t.Run("two permission requests from two sessions are answered to the right ones", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "claude-agent-acp", s.agent, time.Minute)
		first := e.start()
		second := e.newSession(2, "/home/dev/other")
		askA := e.prompt(3, first)
		askB := e.prompt(4, second)
		ra, rb := s.filed(t, e.log), s.filed(t, e.log)
		if ra.SourceRef["session"] != first {
			ra, rb = rb, ra
		}
		if ra.SourceRef["session"] != first || rb.SourceRef["session"] != second || rb.SourceRef["cwd"] != "/home/dev/other" {
			t.Fatalf("filed %v and %v; want one per session with its cwd", ra.SourceRef, rb.SourceRef)
		}
		s.decide(t, rb, "allow_once")
		s.decide(t, ra, "reject_once")
		got := map[string]string{}
		for len(got) < 2 {
			m := e.next()
			switch {
			case m["method"] == "session/update":
				p := m["params"].(map[string]any)
				got[p["sessionId"].(string)] = p["update"].(map[string]any)["content"].(map[string]any)["text"].(string)
			case m["method"] == acp.MethodCancelRequest, m["result"] != nil:
			default:
				t.Fatalf("unexpected %v", m)
			}
		}
		if got[first] != "outcome selected reject" || got[second] != "outcome selected allow" {
			t.Fatalf("answers by session %v (asks %v, %v); want the first rejected and the second allowed", got, askA["id"], askB["id"])
		}
	})

	t.Run("the agent's exit ends the bridge with its code", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "gemini-cli", s.agent, time.Minute)
		sid := e.start()
		e.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":` + quote(sid) + `,"prompt":[{"type":"text","text":"exit 7"}]}}`)
		if r := e.ended(); r.code != 7 || r.err != nil {
			t.Fatalf("bridge ended %d %v, want the agent's 7", r.code, r.err)
		}
	})

	t.Run("the editor closing stdin ends the agent, even one that ignores it", func(t *testing.T) {
		s := newServer(t)
		e := attach(t, "codex-acp", s.agent, time.Minute)
		sid := e.start()
		e.prompt(2, sid)
		r := s.filed(t, e.log)
		e.in.Close()
		if res := e.ended(); res.err != nil {
			t.Fatalf("bridge ended %d %v", res.code, res.err)
		}
		if got := s.settled(t, r.ID); got.Status != "cancelled" {
			t.Fatalf("the open request is %s after the session ended, want cancelled", got.Status)
		}
	})
}
