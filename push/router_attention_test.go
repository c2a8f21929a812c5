package push_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
)

const grace = 2 * time.Minute

// fakeNow is the router's clock, moved by the test.
type fakeNow struct{ at atomic.Pointer[time.Time] }

func newNow() *fakeNow {
	n := &fakeNow{}
	now := time.Now()
	n.at.Store(&now)
	return n
}

func (n *fakeNow) Now() time.Time { return *n.at.Load() }

func (n *fakeNow) add(d time.Duration) {
	at := n.Now().Add(d)
	n.at.Store(&at)
}

// sessionWaits has session stop and wait, as its hook reports it; the last
// message is agent text that must never reach a push.
func (rg *rig) sessionWaits(t *testing.T, session string) *models.Request {
	t.Helper()
	_, w, err := rg.store.SessionEvent(ctx, rg.agent, models.SessionEvent{Session: session, Agent: "claude-code", Kind: models.EventWaiting, Message: "SECRET-DETAIL", CanReply: true})
	if err != nil || w == nil {
		t.Fatalf("stop: %+v %v", w, err)
	}
	return w
}

func (rg *rig) sessionMoves(t *testing.T, session string) {
	t.Helper()
	if _, _, err := rg.store.SessionEvent(ctx, rg.agent, models.SessionEvent{Session: session, Agent: "claude-code", Kind: models.EventMoved}); err != nil {
		t.Fatal(err)
	}
}

// held waits for the router to hold id for its grace and returns the timer.
func held(t *testing.T, rg *rig, clock *fakeClock, id string) *fakeTimer {
	t.Helper()
	if e := rg.wait(t, "attention-held"); e.RequestID != id {
		t.Fatalf("held %s, want %s", e.RequestID, id)
	}
	return clock.next(t)
}

func waitsPush(t *testing.T, rg *rig, id string) apnstest.Push {
	t.Helper()
	p := testkit.Recv(t, rg.pushes, "a push")
	noSecrets(t, p.Body)
	alert, _ := aps(t, p)["alert"].(map[string]any)
	if p.PushType != "alert" || p.CollapseID != id || alert["body"] != push.BodyWaits || alert["title"] != push.Title {
		t.Fatalf("push for %s: %+v %s", id, p, p.Body)
	}
	return p
}

// TestAttentionGrace checks the badge level: a session's waiting item is
// pushed only once the grace is over and it is still open, at most once per
// session per grace, never when it closed sooner; an agent's FYI is never
// pushed; interrupting kinds still push at once; and a grace outlives a
// restart.
func TestAttentionGrace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		clock, now := newClock(), newNow()
		cfg := push.Config{AfterFunc: clock.AfterFunc, Now: now.Now, AttentionGrace: grace}
		var before *models.Request
		rg := newRigWith(t, dialect, cfg, nil, nil, func(rg *rig) {
			rg.device(t)
			before = rg.sessionWaits(t, "filed-before-start") // a restart finds it open
		})

		t.Run("an item open before a restart is held again for what is left of its grace", func(t *testing.T) {
			tm := held(t, rg, clock, before.ID)
			if want := before.CreatedAt.Add(grace).Sub(now.Now()); (tm.d - want).Abs() > time.Millisecond {
				t.Fatalf("re-armed for %s, want what is left of its grace, %s", tm.d, want)
			}
			now.add(grace)
			tm.fire()
			waitsPush(t, rg, before.ID)
			rg.sessionMoves(t, "filed-before-start")
			if p := testkit.Recv(t, rg.pushes, "the clear"); p.PushType != "background" || p.CollapseID != before.ID {
				t.Fatalf("clear: %+v", p)
			}
		})

		t.Run("a waiting item is pushed only after the grace, generic", func(t *testing.T) {
			w := rg.sessionWaits(t, "s1")
			tm := held(t, rg, clock, w.ID)
			if want := w.CreatedAt.Add(grace).Sub(now.Now()); (tm.d - want).Abs() > time.Millisecond {
				t.Fatalf("held for %s, want until its grace ends, %s", tm.d, want)
			}
			if n := rg.apns.Count(); n != 2 {
				t.Fatalf("%d pushes before the grace ended, want only the two before", n)
			}
			now.add(grace)
			tm.fire()
			waitsPush(t, rg, w.ID)

			t.Run("the same session waiting again within the grace waits a grace after its last push", func(t *testing.T) {
				rg.sessionMoves(t, "s1")
				testkit.Recv(t, rg.pushes, "the clear of the first")
				w2 := rg.sessionWaits(t, "s1")
				tm := held(t, rg, clock, w2.ID)
				now.add(grace / 2)
				tm.fire() // its own grace may be over by the clock: the session's is not
				if e := rg.wait(t, "attention-coalesced"); e.RequestID != w2.ID {
					t.Fatalf("coalesced %s", e.RequestID)
				}
				again := clock.next(t)
				if again.d != grace/2 {
					t.Fatalf("re-armed for %s, want the %s left of the session's grace", again.d, grace/2)
				}
				if n := rg.apns.Count(); n != 4 {
					t.Fatalf("%d pushes, want no new one within the session's grace", n)
				}
				now.add(grace / 2)
				again.fire()
				waitsPush(t, rg, w2.ID)
				rg.sessionMoves(t, "s1")
				testkit.Recv(t, rg.pushes, "the clear of the second")
			})
		})

		t.Run("an item resolved before the grace is never pushed", func(t *testing.T) {
			w := rg.sessionWaits(t, "s2")
			tm := held(t, rg, clock, w.ID)
			rg.sessionMoves(t, "s2")
			if e := rg.wait(t, "suppressed"); e.RequestID != w.ID {
				t.Fatalf("suppressed %s", e.RequestID)
			}
			if !tm.stopped.Load() {
				t.Fatal("the grace timer of a resolved item still runs")
			}
		})

		t.Run("an agent's FYI (no session) is silent; interrupting kinds still push at once", func(t *testing.T) {
			count := rg.apns.Count()
			fyi, _, err := rg.store.CreateRequest(ctx, rg.agent, models.NewRequest{Kind: models.KindWaiting, Title: "SECRET-TITLE"}, "")
			if err != nil {
				t.Fatal(err)
			}
			r := rg.file(t, models.KindPermission)
			tm := clock.next(t) // the coalescing window: no grace for the FYI came first
			if tm.d != time.Second {
				t.Fatalf("first timer %s, want the 1s coalescing window of the permission", tm.d)
			}
			tm.fire()
			p := testkit.Recv(t, rg.pushes, "the alert")
			alert, _ := aps(t, p)["alert"].(map[string]any)
			if p.CollapseID != r.ID || alert["body"] != push.BodyOne {
				t.Fatalf("alert: %+v %s", p, p.Body)
			}
			if n := rg.apns.Count(); n != count+1 {
				t.Fatalf("%d pushes, want the alert alone (the FYI %s pushes nothing)", n-count, fyi.ID)
			}
		})
	})
}
