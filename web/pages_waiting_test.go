package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// sessionWaits reports a session of the page's agent that stopped with msg;
// canReply says the reporter carries an answer back. It returns the waiting item.
func (e *pageEnv) sessionWaits(session, msg string, canReply bool) *api.Request {
	e.t.Helper()
	got := e.sessionEvent(api.SessionEvent{Session: session, Event: models.EventWaiting, Message: msg, CanReply: canReply})
	if got.Waiting == nil {
		e.t.Fatalf("no waiting item: %+v", got)
	}
	return got.Waiting
}

// sessionEvent reports ev for the page's agent, a Claude Code session on
// devbox in /home/dev/proj unless ev says otherwise.
func (e *pageEnv) sessionEvent(ev api.SessionEvent) api.SessionEventAnswer {
	e.t.Helper()
	if ev.Agent == "" {
		ev.Agent = "claude-code"
	}
	if ev.Cwd == "" {
		ev.Cwd = "/home/dev/proj"
	}
	if ev.Machine == "" {
		ev.Machine = "devbox"
	}
	var got api.SessionEventAnswer
	if err := e.agent.Do(context.Background(), http.MethodPost, "/v1/agent-sessions/events", nil, ev, &got); err != nil {
		e.t.Fatalf("session event: %v", err)
	}
	return got
}

// TestPageWaitingCard checks a waiting item's card: the session's last
// message, and an answer box only where the session can take the answer.
func TestPageWaitingCard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		e := startPage(t, dialect)
		b := e.browser()
		csrf := e.login(b)
		answer := func(w *api.Request, version int, text string, withCSRF bool) *http.Response {
			f := url.Values{"version": {strconv.Itoa(version)}, "decision": {""}, "answer": {text}, "back": {"/"}}
			if withCSRF {
				f.Set("csrf", csrf)
			}
			return e.postForm(b, "/requests/"+w.ID+"/decide", f, nil)
		}

		t.Run("where a reply reaches the session: the last message, an answer box, and the answer continues nothing else", func(t *testing.T) {
			w := e.sessionWaits("s-reply", "Pushed. Which branch next?", true)
			c := e.get(b, "/", http.StatusOK).Find("#req-" + w.ID)
			if got := c.Find(`[data-testid="card-last-message"]`).Text(); got != "Pushed. Which branch next?" {
				t.Fatalf("last message = %q", got)
			}
			if c.Find(`textarea[name="answer"]`).Length() != 1 || c.Find(`[data-testid="send-answer"]`).Length() != 1 {
				t.Fatal("no answer box where the session takes a reply")
			}
			if c.Find(`[data-testid="card-no-reply"]`).Length() != 0 || c.Find(`[data-testid="option"]`).Length() != 0 {
				t.Fatal("a reply card says it takes no reply, or offers an option")
			}
			if c.Find(`[data-testid="dismiss"]`).Length() != 1 {
				t.Fatal("no dismiss on a waiting card")
			}
			// CSRF as every page form; then bound to the version shown.
			if res := answer(w, w.Version, "main", false); res.StatusCode != http.StatusForbidden {
				t.Fatalf("answer without csrf = %d", res.StatusCode)
			}
			if res := answer(w, w.Version+1, "main", true); res.StatusCode != http.StatusConflict {
				t.Fatalf("answer on a version not shown = %d", res.StatusCode)
			}
			if res := answer(w, w.Version, "main", true); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("answer = %d", res.StatusCode)
			}
			got, err := e.operator.Get(ctx, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != models.StatusResolved || got.Answer == nil || *got.Answer != "main" || got.Decision != nil || got.Effect() != "" {
				t.Fatalf("answered: %+v", got)
			}
		})

		t.Run("where nothing carries a reply back: the card says so and shows no answer box", func(t *testing.T) {
			w := e.sessionWaits("s-noreply", "All done.", false)
			c := e.get(b, "/", http.StatusOK).Find("#req-" + w.ID)
			if got := c.Find(`[data-testid="card-last-message"]`).Text(); got != "All done." {
				t.Fatalf("last message = %q", got)
			}
			if !strings.Contains(c.Find(`[data-testid="card-no-reply"]`).Text(), "cannot take a reply") {
				t.Fatalf("card = %q", c.Text())
			}
			if c.Find(`textarea[name="answer"]`).Length() != 0 || c.Find(`[data-testid="send-answer"]`).Length() != 0 {
				t.Fatal("an answer box where no reply can reach the session")
			}
			if c.Find(`[data-testid="dismiss"]`).Length() != 1 {
				t.Fatal("no dismiss")
			}
			// A hand-made form post is refused and changes nothing.
			if res := answer(w, w.Version, "go on", true); res.StatusCode != http.StatusBadRequest {
				t.Fatalf("answer nobody carries = %d", res.StatusCode)
			}
			if got, _ := e.operator.Get(ctx, w.ID); got.Status != models.StatusOpen || got.Version != w.Version {
				t.Fatalf("after a refused answer: %+v", got)
			}
		})
	})
}
