package web_test

import (
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

// feedRig is the API with the feed's wait and wake events.
type feedRig struct {
	*apiRig
	started chan struct{}
	wakes   chan string
}

func newFeedRig(t *testing.T, dialect string) *feedRig {
	t.Helper()
	f := &feedRig{started: make(chan struct{}, 16), wakes: make(chan string, 16)}
	f.apiRig = newAPIConfig(t, dialect, web.Config{
		OnWaitStart: func() { f.started <- struct{}{} },
		OnFeedWake:  func(id string) { f.wakes <- id },
	})
	return f
}

// startFeed long-polls a runtime's feed from the start in the background and
// returns once the server holds the wait.
func (f *feedRig) startFeed(t *testing.T, c *client.Client, runtimeID string) <-chan *api.DecisionPage {
	t.Helper()
	out := make(chan *api.DecisionPage, 1)
	go func() {
		// Long enough that an answer by timeout is an empty page, not a pass.
		p, err := c.Decisions(bg, runtimeID, "", 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		out <- p
	}()
	next(t, (<-chan struct{})(f.started), "the feed's wait")
	return out
}

func fileFor(t *testing.T, c *client.Client, runtimeID string) *api.Request {
	t.Helper()
	r, err := c.File(bg, api.NewRequest{Title: "git push", Options: allowDeny(), RuntimeID: &runtimeID}, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func onlyDecision(t *testing.T, p *api.DecisionPage, id string) {
	t.Helper()
	if p == nil || len(p.Decisions) != 1 || p.Decisions[0].RequestID != id {
		t.Fatalf("feed page = %+v, want the decision on %s", p, id)
	}
}

func TestFeedWakesOnResync(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		f := newFeedRig(t, dialect)
		rtc := f.as(t, models.RoleRuntime)
		rt, err := rtc.RegisterRuntime(bg, api.RuntimeRegistration{Name: "behind-nat", Machine: "m"})
		if err != nil {
			t.Fatal(err)
		}
		r := fileFor(t, rtc, rt.ID)
		page := f.startFeed(t, rtc, rt.ID)

		// A decision whose announcement is lost (as while the PostgreSQL
		// listener reconnects), then the resync the reconnect makes.
		quiet := *f.s
		quiet.Announcer = nil
		if _, err := quiet.Decide(bg, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
			t.Fatal(err)
		}
		f.changes.Resync()
		onlyDecision(t, next(t, page, "the feed's answer"), r.ID)
	})
}

func TestFeedWakesOnlyForItsRuntime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		f := newFeedRig(t, dialect)
		op, rtA, rtB := f.as(t, models.RoleOperator), f.as(t, models.RoleRuntime), f.as(t, models.RoleRuntime)
		a, err := rtA.RegisterRuntime(bg, api.RuntimeRegistration{Name: "a", Machine: "m"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := rtB.RegisterRuntime(bg, api.RuntimeRegistration{Name: "b", Machine: "m"})
		if err != nil {
			t.Fatal(err)
		}
		ra, rb := fileFor(t, rtA, a.ID), fileFor(t, rtB, b.ID)
		page := f.startFeed(t, rtA, a.ID)

		if _, err := op.Decide(bg, rb.ID, 1, "once", ""); err != nil { // another runtime's decision
			t.Fatal(err)
		}
		if _, err := op.Decide(bg, ra.ID, 1, "once", ""); err != nil {
			t.Fatal(err)
		}
		onlyDecision(t, next(t, page, "the feed's answer"), ra.ID)
		// Every wake happened before the answer: exactly one, for its own decision.
		if n := len(f.wakes); n != 1 {
			t.Fatalf("runtime a's feed woke %d times, want 1: another runtime's decision must not wake it", n)
		}
		if id := testkit.Recv(t, f.wakes, "f.wakes"); id != a.ID {
			t.Fatalf("woke %s", id)
		}
	})
}
