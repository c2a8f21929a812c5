package acp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
)

// waitingItems hands over the waiting items Gatehouse opens, as the operator
// reads them; it subscribes before anything is reported.
type waitingItems struct {
	s   *server
	ids chan string
}

func watchWaiting(t *testing.T, s *server) *waitingItems {
	t.Helper()
	sub := s.env.Changes.Subscribe(256)
	t.Cleanup(sub.Close)
	w := &waitingItems{s: s, ids: make(chan string, 64)}
	go func() {
		for ch := range sub.C {
			if ch.Action == "create" {
				select {
				case w.ids <- ch.RequestID:
				default: // more filings than any test makes
				}
			}
		}
	}()
	return w
}

// next is the next waiting item opened (other filings are skipped).
func (w *waitingItems) next(t *testing.T) *api.Request {
	t.Helper()
	for {
		r, err := w.s.operator.Get(context.Background(), testkit.Recv(t, w.ids, "a waiting item"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind == models.KindWaiting {
			return r
		}
	}
}

// settledVia waits for the item to settle and checks how.
func (s *server) settledVia(t *testing.T, r *api.Request, via string) *api.Request {
	t.Helper()
	got := s.settled(t, r.ID)
	if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != via {
		t.Fatalf("%s settled %s via %v; want resolved via %s", r.ID, got.Status, got.DecidedVia, via)
	}
	return got
}

// stillOpen checks the item is open at the version seen.
func (s *server) stillOpen(t *testing.T, r *api.Request) {
	t.Helper()
	got, err := s.operator.Get(context.Background(), r.ID)
	if err != nil || got.Status != models.StatusOpen || got.Version != r.Version {
		t.Fatalf("%s is %+v (%v); want it open at version %d", r.ID, got, err, r.Version)
	}
}

// answerAs gives a free-text answer on the request with c's token.
func answerAs(c *client.Client, r *api.Request, text string) error {
	body := map[string]any{"version": r.Version, "decision": nil, "answer": text}
	return c.Do(context.Background(), http.MethodPost, "/v1/requests/"+r.ID+"/decide", nil, body, nil)
}

// session is one agent session as the operator lists it.
func (s *server) session(t *testing.T, owner *client.Client, id string) api.AgentSession {
	t.Helper()
	var list api.AgentSessions
	if err := owner.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, v := range list.Sessions {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no session %s in %+v", id, list.Sessions)
	return api.AgentSession{}
}

// say runs one turn of the fake agent that asks nothing and says text.
func (e *editor) say(id int, session, text string) (outcome, stop string) {
	e.t.Helper()
	e.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"session/prompt","params":{"sessionId":` + quote(session) + `,"prompt":[{"type":"text","text":` + quote("say "+text) + `}]}}`)
	return e.turnEnd()
}

func (e *editor) cancelTurn(session string) {
	e.t.Helper()
	e.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":` + quote(session) + `}}`)
}

// TestSessionAttention: behind an editor, the bridge names each ACP session
// to Gatehouse and says when it waits: a turn's end opens its waiting item
// with the agent's last message, a prompt or a cancel moves it on, the
// agent's exit ends it. The editor sends the prompts, so the item takes no
// reply.
func TestSessionAttention(t *testing.T) {
	s := newServer(t)
	items := watchWaiting(t, s)
	e := attach(t, "claude-agent-acp", s.agent, time.Minute)
	sid := e.start()
	var first, second *api.Request

	t.Run("a turn's end opens the waiting item with the agent's last message, and it takes no reply", func(t *testing.T) {
		if _, stop := e.say(2, sid, "All pushed to main."); stop != "end_turn" {
			t.Fatalf("stop %q", stop)
		}
		first = items.next(t)
		// The text before the tool call is not the last message.
		if first.Detail != "All pushed to main." || first.SourceRef["session"] != sid || first.SourceRef["cwd"] != "/home/dev/project" ||
			first.SourceRef["agent"] != "@zed-industries/claude-agent-acp" || first.AllowAnswer || len(first.Options) != 0 {
			t.Fatalf("waiting item %+v", first)
		}
		if v := s.session(t, s.operator, sid); v.State != models.SessionWaiting || v.LastMessage != "All pushed to main." || v.Cwd != "/home/dev/project" {
			t.Fatalf("session %+v", v)
		}
		if err := answerAs(s.operator, first, "Now tag it"); err == nil {
			t.Fatal("an answer was taken on an item that takes none")
		}
		s.stillOpen(t, first)
	})

	t.Run("a new prompt moves it on; the next turn's end opens a new one", func(t *testing.T) {
		e.say(3, sid, "Tagged v1.2.")
		s.settledVia(t, first, models.ViaMovedOn)
		second = items.next(t)
		if second.ID == first.ID || second.Detail != "Tagged v1.2." {
			t.Fatalf("second waiting item %+v", second)
		}
	})

	t.Run("session/cancel moves it on", func(t *testing.T) {
		e.cancelTurn(sid)
		s.settledVia(t, second, models.ViaMovedOn)
	})

	var mine *api.Request
	other := e.newSession(4, "/home/dev/other")
	t.Run("another session's prompts, cancels and turns touch nothing of this one's", func(t *testing.T) {
		e.say(5, sid, "Mine waits.")
		mine = items.next(t)
		e.say(6, other, "Theirs waits.")
		theirs := items.next(t)
		if theirs.SourceRef["session"] != other || theirs.Detail != "Theirs waits." {
			t.Fatalf("the other session's item %+v", theirs)
		}
		e.cancelTurn(other)
		s.settledVia(t, theirs, models.ViaMovedOn)
		e.say(7, other, "Theirs again.")
		items.next(t)
		s.stillOpen(t, mine)
	})

	t.Run("another agent's bridge on a session of the same id touches nothing of this one's", func(t *testing.T) {
		intruder := client.New(s.env.URL, s.env.Token("agent", "intruder"))
		intruder.HTTP = s.env.HTTP
		e2 := attach(t, "claude-agent-acp", intruder, time.Minute)
		sid2 := e2.start()
		if sid2 != sid {
			t.Fatalf("the fake agents named sessions %s and %s; the test needs the same id", sid, sid2)
		}
		e2.say(2, sid2, "Intruder waits.")
		items.next(t)
		e2.cancelTurn(sid2)
		e2.in.Close()
		e2.ended()
		s.stillOpen(t, mine)
		if v := s.session(t, s.agent, sid); v.State != models.SessionWaiting {
			t.Fatalf("the first agent's session after the other's exit: %+v", v)
		}
	})

	t.Run("the agent's exit ends every session and resolves its waiting item", func(t *testing.T) {
		e.in.Close()
		e.ended()
		s.settledVia(t, mine, models.ViaEnded)
		for _, id := range []string{sid, other} {
			if v := s.session(t, s.agent, id); v.State != models.SessionEnded {
				t.Fatalf("session %s after the agent's exit: %+v", id, v)
			}
		}
	})
}

// TestHeadlessReply: headless, the bridge sends the prompts, so a waiting
// item takes a reply, and the operator's answer is the next session/prompt.
func TestHeadlessReply(t *testing.T) {
	t.Run("the operator's answer is the next prompt: the agent runs another turn", func(t *testing.T) {
		s := newServer(t)
		items := watchWaiting(t, s)
		h := runHeadlessBridge(t, "gemini-cli", &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute, WaitReply: time.Minute, Machine: "devbox"}, "say First done.")
		w := items.next(t)
		if w.Detail != "First done." || !w.AllowAnswer || w.SourceRef["machine"] != "devbox" || w.SourceRef["agent"] != "gemini-cli" {
			t.Fatalf("waiting item %+v", w)
		}
		if err := answerAs(s.operator, w, "say Second done."); err != nil {
			t.Fatal(err)
		}
		w2 := items.next(t)
		if w2.Detail != "Second done." {
			t.Fatalf("the turn after the reply ended with %q; want the agent to have been prompted with the answer", w2.Detail)
		}
		if got := s.settled(t, w.ID); got.Answer == nil || *got.Answer != "say Second done." || got.Decision != nil {
			t.Fatalf("the answered item %+v", got)
		}
		if v := s.session(t, s.operator, w.SourceRef["session"]); v.State != models.SessionWaiting || v.WaitingID == nil || *v.WaitingID != w2.ID {
			t.Fatalf("session %+v; want it waiting on %s", v, w2.ID)
		}
		// An interrupt while it waits for the next reply ends the run; the
		// agent's exit ends the session.
		h.cancel()
		if code := h.exit(t); code != 0 || !strings.Contains(h.out.String(), "[reply] say Second done.") {
			t.Fatalf("exit %d, stdout %q", code, h.out.String())
		}
		s.settledVia(t, w2, models.ViaEnded)
	})

	t.Run("no answer within --wait-reply: the run ends and the item ends with the session", func(t *testing.T) {
		s := newServer(t)
		items := watchWaiting(t, s)
		h := runHeadlessBridge(t, "gemini-cli", &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute, WaitReply: time.Second}, "say Done.")
		w := items.next(t)
		if code := h.exit(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		s.settledVia(t, w, models.ViaEnded)
		h.log.await(t, "no reply on "+w.ID)
	})

	t.Run("an item settled another way continues nothing", func(t *testing.T) {
		s := newServer(t)
		items := watchWaiting(t, s)
		h := runHeadlessBridge(t, "gemini-cli", &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute, WaitReply: time.Minute}, "say Done.")
		w := items.next(t)
		if err := s.operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+w.ID+"/dismiss", nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		if code := h.exit(t); code != 0 || strings.Contains(h.out.String(), "[reply]") {
			t.Fatalf("exit %d, stdout %q", code, h.out.String())
		}
	})

	t.Run("without --wait-reply the item takes no reply", func(t *testing.T) {
		s := newServer(t)
		items := watchWaiting(t, s)
		h := runHeadlessBridge(t, "gemini-cli", &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute}, "say Done.")
		w := items.next(t)
		if w.AllowAnswer {
			t.Fatalf("waiting item %+v", w)
		}
		if code := h.exit(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		s.settledVia(t, w, models.ViaEnded)
	})
}

// TestHeadlessReplyAttacks: only an operator's answer on the session's own
// waiting item becomes a prompt, and an answer decides no permission.
func TestHeadlessReplyAttacks(t *testing.T) {
	t.Run("the agent's own token cannot answer its waiting item", func(t *testing.T) {
		s := newServer(t)
		items := watchWaiting(t, s)
		h := runHeadlessBridge(t, "gemini-cli", &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute, WaitReply: time.Minute}, "say Done.")
		w := items.next(t)
		var e *client.Error
		if err := answerAs(s.agent, w, "say rm -rf ~"); err == nil || !asClientError(err, &e) || e.Status != http.StatusForbidden {
			t.Fatalf("the agent answered its own waiting item: %v", err)
		}
		s.stillOpen(t, w)
		h.cancel()
		if code := h.exit(t); code != 0 || strings.Contains(h.out.String(), "[reply]") {
			t.Fatalf("exit %d, stdout %q: a prompt was sent", code, h.out.String())
		}
	})

	t.Run("a free-text answer decides no permission request", func(t *testing.T) {
		s := newServer(t)
		items := watchWaiting(t, s)
		h := runHeadlessBridge(t, "claude-agent-acp", &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute, WaitReply: time.Minute}, "run the command")
		r := s.filed(t, h.log)
		if err := answerAs(s.operator, r, "allow_once"); err == nil {
			t.Fatal("a free-text answer was taken on a permission request")
		}
		s.stillOpen(t, r)
		s.decide(t, r, "reject_once")
		w := items.next(t)
		if w.Detail != "outcome selected reject" {
			t.Fatalf("the turn after the reject said %q", w.Detail)
		}
		h.cancel()
		if code := h.exit(t); code != 0 || strings.Contains(h.out.String(), "outcome selected allow") {
			t.Fatalf("exit %d, stdout %q", code, h.out.String())
		}
	})
}

func asClientError(err error, e **client.Error) bool {
	x, ok := err.(*client.Error)
	*e = x
	return ok
}

// TestSessionReportsNeverBlock: a Gatehouse that is down, or takes the
// reports and never answers, holds up no turn (a report may wait a minute
// here: each turn is a guard's wait at most), and the bridge's exit at most
// EndGrace.
func TestSessionReportsNeverBlock(t *testing.T) {
	defer func(g, r time.Duration) { *acp.EndGrace, *acp.ReportTimeout = g, r }(*acp.EndGrace, *acp.ReportTimeout)
	*acp.EndGrace, *acp.ReportTimeout = 50*time.Millisecond, time.Minute
	release := make(chan struct{})
	arrived := make(chan struct{}, 64)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	for name, url := range map[string]string{"down": deadURL(t), "hanging": hang.URL} {
		t.Run("Gatehouse "+name, func(t *testing.T) {
			e := attach(t, "claude-agent-acp", client.New(url, "gh_unused"), time.Minute)
			sid := e.start()
			for i := range 3 {
				if _, stop := e.say(2+i, sid, "Done."); stop != "end_turn" {
					t.Fatalf("turn %d ended %q", i, stop)
				}
			}
			if name == "hanging" {
				testkit.Recv(t, arrived, "the first report at the hanging server")
			}
			e.in.Close()
			if r := e.ended(); r.code != 0 {
				t.Fatalf("the bridge ended %+v", r)
			}
		})
	}
}
