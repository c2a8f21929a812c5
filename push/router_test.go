package push_test

import (
	"context"
	"encoding/json"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
)

var ctx = context.Background()

const base = "https://inbox.example.com"

// Agent text that must never leave the server in a push.
var secrets = []string{"SECRET-TITLE", "SECRET-SUMMARY", "SECRET-DETAIL", "SECRET-COMMAND", "SECRET-LABEL"}

// fakeClock hands the router's timers to the test, which fires them.
type fakeClock struct{ timers chan *fakeTimer }

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped atomic.Bool
}

func (t *fakeTimer) fire() {
	if !t.stopped.Load() {
		t.f()
	}
}

func newClock() *fakeClock { return &fakeClock{timers: make(chan *fakeTimer, 100)} }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	t := &fakeTimer{d: d, f: f}
	c.timers <- t
	return func() bool { return !t.stopped.Swap(true) }
}

func (c *fakeClock) next(t *testing.T) *fakeTimer {
	t.Helper()
	return testkit.Recv(t, c.timers, "a timer to be set")
}

type presence struct{ on atomic.Bool }

func (p *presence) ActiveOperators() bool { return p.on.Load() }

// rig is a store, a fake APNs and a running router.
type rig struct {
	store  *store.Store
	apns   *apnstest.Server
	pushes chan apnstest.Push
	events chan push.Event
	agent  models.Principal
	op     models.Principal
	done   chan struct{}
}

func newRig(t *testing.T, dialect string, cfg push.Config, senders func(*store.Store, *apnstest.Server) push.Senders, pres push.Presence) *rig {
	t.Helper()
	return newRigWith(t, dialect, cfg, senders, pres, nil)
}

// newRigWith is newRig with before run on the store before the router starts
// (what a restarted server finds).
func newRigWith(t *testing.T, dialect string, cfg push.Config, senders func(*store.Store, *apnstest.Server) push.Senders, pres push.Presence, before func(*rig)) *rig {
	t.Helper()
	st, changes := storetest.Store(t, dialect)
	srv, err := apnstest.New()
	if err != nil {
		t.Fatal(err)
	}
	rg := &rig{store: st, apns: srv, pushes: make(chan apnstest.Push, 1000), events: make(chan push.Event, 1000), done: make(chan struct{})}
	srv.OnPush = func(p apnstest.Push) { rg.pushes <- p }
	tok, _, err := st.CreateToken(ctx, models.RoleAgent, "a1")
	if err != nil {
		t.Fatal(err)
	}
	rg.agent = tok.Principal()
	rg.op = models.Principal{ID: "tok_op", Role: models.RoleOperator, Name: "ann"}
	if senders == nil {
		senders = func(_ *store.Store, s *apnstest.Server) push.Senders {
			a, err := push.NewAPNs(s.APNsConfig())
			if err != nil {
				t.Fatal(err)
			}
			return push.Senders{APNs: a}
		}
	}
	cfg.BaseURL = base
	observe := cfg.Observe // a test's own, first
	cfg.Observe = func(e push.Event) {
		if observe != nil {
			observe(e)
		}
		rg.events <- e
	}
	if before != nil {
		before(rg)
	}
	r := push.NewRouter(cfg, st, changes, senders(st, srv), pres)
	runCtx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(rg.done)
		_ = r.Run(runCtx)
	}()
	t.Cleanup(func() {
		cancel()
		testkit.Recv(t, rg.done, "the router to stop") // Run returns only when its workers and timers are gone
		srv.Close()
	})
	return rg
}

func (rg *rig) device(t *testing.T) string {
	t.Helper()
	tok := apnstest.NewToken()
	if _, _, err := rg.store.RegisterDevice(ctx, rg.op, models.Device{Kind: models.DeviceAPNs, Token: tok}); err != nil {
		t.Fatal(err)
	}
	return tok
}

func (rg *rig) file(t *testing.T, kind string) *models.Request {
	t.Helper()
	n := models.NewRequest{
		Kind: kind, Title: "SECRET-TITLE rm -rf", Summary: "SECRET-SUMMARY", Detail: "SECRET-DETAIL",
		Tool: "Bash", Command: "SECRET-COMMAND",
		Options: []models.Option{{ID: "once", Label: "SECRET-LABEL", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
	}
	r, _, err := rg.store.CreateRequest(ctx, rg.agent, n, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (rg *rig) decide(t *testing.T, r *models.Request) {
	t.Helper()
	if _, err := rg.store.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: "deny", By: "operator:ann", Via: "api"}); err != nil {
		t.Fatal(err)
	}
}

// wait returns the next event named name, skipping others.
func (rg *rig) wait(t *testing.T, name string) push.Event {
	t.Helper()
	for e := range rg.events {
		if e.Name == name {
			return e
		}
	}
	panic("unreachable")
}

func noSecrets(t *testing.T, body []byte) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(string(body), s) {
			t.Errorf("payload carries agent text %q: %s", s, body)
		}
	}
}

func aps(t *testing.T, p apnstest.Push) map[string]any {
	t.Helper()
	a, _ := p.Payload["aps"].(map[string]any)
	return a
}

func TestAlertAndClear(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		clock := newClock()
		rg := newRig(t, dialect, push.Config{AfterFunc: clock.AfterFunc}, nil, nil)
		tok := rg.device(t)
		r := rg.file(t, models.KindPermission)
		clock.next(t).fire() // the coalescing window closes

		t.Run("the alert is generic, collapses on the request id and opens its page", func(t *testing.T) {
			p := testkit.Recv(t, rg.pushes, "a push")
			noSecrets(t, p.Body)
			if p.Status != 200 || p.Token != tok || p.PushType != "alert" || p.Priority != "10" || p.CollapseID != r.ID || p.Topic != rg.apns.Topic {
				t.Fatalf("push: %+v", p)
			}
			a := aps(t, p)
			alert, _ := a["alert"].(map[string]any)
			if alert["body"] != push.BodyOne || alert["title"] != push.Title || a["thread-id"] != push.ThreadID || a["badge"] != 1.0 {
				t.Errorf("aps: %v", a)
			}
			if p.Payload["request_id"] != r.ID || p.Payload["url"] != base+"/requests/"+r.ID {
				t.Errorf("payload: %s", p.Body)
			}
		})

		t.Run("a decide sends a background clearing update on the same collapse id", func(t *testing.T) {
			rg.decide(t, r)
			p := testkit.Recv(t, rg.pushes, "a push")
			noSecrets(t, p.Body)
			if p.Status != 200 || p.PushType != "background" || p.Priority != "5" || p.CollapseID != r.ID {
				t.Fatalf("push: %+v", p)
			}
			a := aps(t, p)
			if a["content-available"] != 1.0 || a["alert"] != nil || a["sound"] != nil {
				t.Errorf("aps: %v", a)
			}
			if p.Payload["request_id"] != r.ID || p.Payload["resolved"] != true {
				t.Errorf("payload: %s", p.Body)
			}
		})

		t.Run("every attempt is in the request's audit trail", func(t *testing.T) {
			rg.wait(t, "attempt")
			rg.wait(t, "attempt")
			trail, err := rg.store.AuditTrail(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			var pushes []string
			for _, a := range trail {
				if a.Action == "push" {
					pushes = append(pushes, a.Detail)
				}
			}
			all := strings.Join(pushes, " ")
			if len(pushes) != 2 || !strings.Contains(all, `"push":"alert"`) || !strings.Contains(all, `"push":"clear"`) {
				t.Fatalf("push audit rows: %v", pushes)
			}
		})
	})
}

func TestKinds(t *testing.T) {
	clock := newClock()
	rg := newRig(t, "sqlite", push.Config{AfterFunc: clock.AfterFunc}, nil, nil)
	rg.device(t)

	t.Run("an FYI (waiting, no session) and setup push nothing; a review waits out the attention grace", func(t *testing.T) {
		rg.file(t, models.KindSetup)
		w := rg.file(t, models.KindWaiting)
		rv := rg.file(t, models.KindReview)
		if e := rg.wait(t, "attention-held"); e.RequestID != rv.ID {
			t.Fatalf("held %s, want only the review", e.RequestID)
		}
		tm := clock.next(t)
		if tm.d < time.Minute {
			t.Fatalf("the review is held %s, want the attention grace", tm.d)
		}
		// Dismissing them sends nothing either: nothing was pushed for them.
		for _, r := range []*models.Request{w, rv} {
			if _, err := rg.store.Withdraw(ctx, r.ID, rg.op, models.StatusDismissed); err != nil {
				t.Fatal(err)
			}
		}
		if e := rg.wait(t, "suppressed"); e.RequestID != rv.ID {
			t.Fatalf("suppressed %s", e.RequestID)
		}
		if n := rg.apns.Count(); n != 0 {
			t.Fatalf("APNs got %d pushes, want none", n)
		}
	})
}

func TestCoalescing(t *testing.T) {
	clock := newClock()
	rg := newRig(t, "sqlite", push.Config{AfterFunc: clock.AfterFunc}, nil, nil)
	rg.device(t)

	t.Run("a burst becomes one alert naming how many", func(t *testing.T) {
		var ids []string
		for _, k := range []string{models.KindApproval, models.KindQuestion, models.KindFailure} {
			ids = append(ids, rg.file(t, k).ID)
		}
		window := clock.next(t)
		for range ids {
			rg.wait(t, "batched")
		}
		window.fire()
		p := testkit.Recv(t, rg.pushes, "a push")
		noSecrets(t, p.Body)
		alert, _ := aps(t, p)["alert"].(map[string]any)
		if alert["body"] != "3 agents need your decision" || p.CollapseID != ids[0] || p.Payload["url"] != base+"/" {
			t.Fatalf("alert: %+v %s", p, p.Body)
		}
		var got []string
		b, _ := json.Marshal(p.Payload["request_ids"])
		_ = json.Unmarshal(b, &got)
		if strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Fatalf("request_ids %v, want %v", got, ids)
		}
		if n := rg.apns.Count(); n != 1 {
			t.Fatalf("APNs got %d pushes, want 1", n)
		}
	})

	t.Run("a request decided inside the window is left out", func(t *testing.T) {
		a := rg.file(t, models.KindApproval)
		b := rg.file(t, models.KindApproval)
		window := clock.next(t)
		rg.decide(t, a)
		rg.wait(t, "suppressed")
		window.fire()
		p := testkit.Recv(t, rg.pushes, "a push")
		alert, _ := aps(t, p)["alert"].(map[string]any)
		if alert["body"] != push.BodyOne || p.Payload["request_id"] != b.ID {
			t.Fatalf("alert: %s", p.Body)
		}
	})
}

func TestPresence(t *testing.T) {
	clock := newClock()
	pres := &presence{}
	pres.on.Store(true)
	rg := newRig(t, "sqlite", push.Config{AfterFunc: clock.AfterFunc, Grace: time.Minute}, nil, pres)
	rg.device(t)

	t.Run("decided within the grace period: nothing is pushed", func(t *testing.T) {
		r := rg.file(t, models.KindApproval)
		if e := rg.wait(t, "held"); e.RequestID != r.ID {
			t.Fatalf("held %s", e.RequestID)
		}
		grace := clock.next(t)
		if grace.d != time.Minute {
			t.Fatalf("grace timer %v", grace.d)
		}
		rg.decide(t, r)
		rg.wait(t, "suppressed")
		grace.fire() // stopped: must do nothing
	})

	t.Run("still open when the grace period ends: pushed", func(t *testing.T) {
		r := rg.file(t, models.KindApproval)
		rg.wait(t, "held")
		clock.next(t).fire() // grace over
		rg.wait(t, "batched")
		clock.next(t).fire() // coalescing window
		p := testkit.Recv(t, rg.pushes, "a push")
		if p.Payload["request_id"] != r.ID {
			t.Fatalf("pushed %s", p.Body)
		}
		if n := rg.apns.Count(); n != 1 {
			t.Fatalf("APNs got %d pushes, want 1: the first request must not have been pushed", n)
		}
	})

	t.Run("nobody looking: no grace", func(t *testing.T) {
		pres.on.Store(false)
		r := rg.file(t, models.KindApproval)
		if e := rg.wait(t, "batched"); e.RequestID != r.ID {
			t.Fatalf("batched %s", e.RequestID)
		}
		clock.next(t).fire()
		if p := testkit.Recv(t, rg.pushes, "a push"); p.Payload["request_id"] != r.ID {
			t.Fatalf("pushed %s", p.Body)
		}
	})
}

func TestRefusals(t *testing.T) {
	rg := newRig(t, "sqlite", push.Config{Coalesce: -1, Backoff: time.Millisecond}, nil, nil)
	gone, bad, busy, ok := rg.device(t), rg.device(t), rg.device(t), rg.device(t)
	rg.apns.Answer(gone, 410, "Unregistered")
	rg.apns.Answer(bad, 400, "BadDeviceToken")
	rg.apns.Answer(busy, 429, "TooManyRequests")
	rg.apns.OnPush = func(p apnstest.Push) {
		if p.Token == busy && p.Status == 429 {
			rg.apns.Answer(busy, 200, "") // the next try goes through
		}
		rg.pushes <- p
	}
	rg.file(t, models.KindApproval)

	results := map[string][]push.Result{}
	for sent := 0; sent < 2; {
		e := rg.wait(t, "attempt")
		results[e.Device.Token] = append(results[e.Device.Token], e.Result)
		if e.Result.Sent() {
			sent++
		}
	}
	for len(results[gone])+len(results[bad]) < 2 {
		e := rg.wait(t, "attempt")
		results[e.Device.Token] = append(results[e.Device.Token], e.Result)
	}

	t.Run("410 Unregistered and 400 BadDeviceToken retire the device at once", func(t *testing.T) {
		for _, tok := range []string{gone, bad} {
			if rs := results[tok]; len(rs) != 1 || !rs[0].Retire {
				t.Errorf("%s: %+v", tok[:8], rs)
			}
		}
		live, err := rg.store.ListDevices(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 2 {
			t.Fatalf("%d live devices, want 2", len(live))
		}
		all, _ := rg.store.ListDevices(ctx, true)
		for _, d := range all {
			if d.Token == gone && (d.RetiredAt == nil || !strings.Contains(d.LastResult, "Unregistered")) {
				t.Errorf("gone device: %+v", d)
			}
		}
	})

	t.Run("429 is retried with backoff until sent", func(t *testing.T) {
		rs := results[busy]
		if len(rs) != 2 || rs[0].Status != 429 || !rs[0].Retry || !rs[1].Sent() {
			t.Fatalf("busy: %+v", rs)
		}
		if rs := results[ok]; len(rs) != 1 || !rs[0].Sent() {
			t.Fatalf("ok: %+v", rs)
		}
	})
}

func TestHungAPNs(t *testing.T) {
	rg := newRig(t, "sqlite", push.Config{Coalesce: -1, Workers: 1, Queue: 1}, nil, nil)
	rg.device(t)
	rg.apns.Hang()
	r := rg.file(t, models.KindApproval)
	if p := testkit.Recv(t, rg.pushes, "a push"); p.Payload["request_id"] != r.ID {
		t.Fatalf("first push: %s", p.Body) // arrived, and now hangs unanswered
	}

	t.Run("decides go through while APNs hangs, and the overflow is dropped", func(t *testing.T) {
		rg.decide(t, r) // its clearing push fills the one-slot queue
		for e := rg.wait(t, "queued"); e.Message.Type != push.TypeClear; e = rg.wait(t, "queued") {
		}
		r2 := rg.file(t, models.KindApproval)
		if e := rg.wait(t, "dropped"); e.RequestID != r2.ID {
			t.Fatalf("dropped %+v", e)
		}
		rg.decide(t, r2)
		got, err := rg.store.GetRequest(ctx, r2.ID)
		if err != nil || got.Status != models.StatusResolved {
			t.Fatalf("after decide: %+v %v", got, err)
		}
	})
	// Cleanup stops the router while the push still hangs: Run must return.
}

func TestReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		rg := newRig(t, dialect, push.Config{Coalesce: -1}, nil, nil)
		rg.device(t)
		// A second replica: its own router over the same database, hearing the
		// same changes (as NOTIFY relays them), pushing to the same APNs.
		changes := rg.store.Announcer.(*store.Changes)
		a, err := push.NewAPNs(rg.apns.APNsConfig())
		if err != nil {
			t.Fatal(err)
		}
		events := make(chan push.Event, 100)
		r2 := push.NewRouter(push.Config{Coalesce: -1, BaseURL: base, Observe: func(e push.Event) { events <- e }}, rg.store, changes, push.Senders{APNs: a}, nil)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = r2.Run(runCtx) }()
		defer func() { cancel(); testkit.Recv(t, done, "the router to stop"); a.Close() }()

		t.Run("one alert and one clear per request, whichever replica sends them", func(t *testing.T) {
			r := rg.file(t, models.KindApproval)
			testkit.Recv(t, rg.pushes, "a push")
			// Both routers have decided: one queued it, the other found it claimed.
			outcome := func(ch chan push.Event) string {
				for e := range ch {
					if e.Name == "queued" || e.Name == "claimed-elsewhere" {
						return e.Name
					}
				}
				return ""
			}
			o1, o2 := outcome(rg.events), outcome(events)
			if o1 == o2 {
				t.Fatalf("both replicas: %s", o1)
			}
			rg.decide(t, r)
			p := testkit.Recv(t, rg.pushes, "a push")
			if p.PushType != "background" || p.CollapseID != r.ID {
				t.Fatalf("second push: %+v", p)
			}
			rg.file(t, models.KindApproval) // a marker: its alert comes after anything still pending for r
			if p := testkit.Recv(t, rg.pushes, "a push"); p.PushType != "alert" {
				t.Fatalf("a duplicate was sent: %+v", p)
			}
		})
	})
}
