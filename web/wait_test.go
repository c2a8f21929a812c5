package web_test

import (
	"context"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
	"go.uber.org/goleak"
)

// waitResult is one long-poll's answer.
type waitResult struct {
	status int
	body   map[string]any
}

// startWait issues a long-poll in the background and returns a channel with its
// answer, and a channel that is closed once the server holds the wait.
func startWait(t *testing.T, e *webtest.Env, ctx context.Context, id, token, timeout string) <-chan waitResult {
	t.Helper()
	out := make(chan waitResult, 1)
	go func() {
		status, body := e.DoCtx(ctx, "GET", "/v1/requests/"+id+"/wait?timeout="+timeout, token, nil)
		var m map[string]any
		if status != 0 {
			m = webtest.JSON(t, body)
		}
		out <- waitResult{status, m}
	}()
	return out
}

// events counts the server's wait starts and ends.
type events struct{ started, ended chan struct{} }

func newEvents() (*events, web.Config) {
	ev := &events{started: make(chan struct{}, 100), ended: make(chan struct{}, 100)}
	return ev, web.Config{
		OnWaitStart: func() { ev.started <- struct{}{} },
		OnWaitEnd:   func() { ev.ended <- struct{}{} },
	}
}

// held blocks until the server has started n more waits.
func (ev *events) held(t *testing.T, n int) {
	t.Helper()
	for range n {
		testkit.Recv(t, ev.started, "the wait to start")
	}
}

// waitModes are the two ways a request wait is held: parked (its connection
// handed over, internal/park) and on net/http's goroutine.
var waitModes = []struct {
	name   string
	noPark bool
}{{"parked", false}, {"unparked", true}}

func TestWait(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		for _, mode := range waitModes {
			t.Run(mode.name, func(t *testing.T) { testWait(t, dialect, mode.noPark) })
		}
	})
}

func testWait(t *testing.T, dialect string, noPark bool) {
	{
		ev, cfg := newEvents()
		cfg.MaxWaitersPerCaller = 2
		cfg.NoPark = noPark
		e := webtest.New(t, dialect, cfg)
		ended := ev.ended
		ag, op := e.Token(models.RoleAgent, "a"), e.Token(models.RoleOperator, "op")
		ctx := context.Background()

		t.Run("a decide from another goroutine wakes the waiter", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			w := startWait(t, e, ctx, id, ag, "60")
			ev.held(t, 1)
			go e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 1, "decision": "once"})
			got := testkit.Recv(t, w, "the wait's answer")
			if got.status != 200 || got.body["decision"] != "once" || got.body["timed_out"] != false || got.body["status"] != "resolved" {
				t.Fatalf("%+v", got)
			}
			testkit.Recv(t, ended, "the wait to end")
		})

		t.Run("a request not open answers at once", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			e.Do("POST", "/v1/requests/"+id+"/cancel", ag, struct{}{})
			got := testkit.Recv(t, startWait(t, e, ctx, id, ag, "300"), "the wait's answer")
			if got.status != 200 || got.body["status"] != "cancelled" || got.body["timed_out"] != false {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("a timeout answers 200 with timed_out", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			got := testkit.Recv(t, startWait(t, e, ctx, id, ag, "1"), "the wait's answer")
			if got.status != 200 || got.body["timed_out"] != true || got.body["status"] != "open" {
				t.Fatalf("%+v", got)
			}
			ev.held(t, 1)
			testkit.Recv(t, ended, "the wait to end")
		})

		t.Run("over the per-caller cap: 429 with Retry-After", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			a := startWait(t, e, wctx, id, ag, "60")
			b := startWait(t, e, wctx, id, ag, "60")
			ev.held(t, 2)
			req, _ := http.NewRequest("GET", e.URL+"/v1/requests/"+id+"/wait", nil)
			req.Header.Set("Authorization", "Bearer "+ag)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			_ = jsonDecode(resp, &m)
			resp.Body.Close()
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || m["error"] != "too_many_waiters" {
				t.Fatalf("%d %v %v", resp.StatusCode, resp.Header, m)
			}
			// A settled request is answered even at the cap: it needs no wait.
			settled := e.File(ag, nil)["id"].(string)
			e.Do("POST", "/v1/requests/"+settled+"/cancel", ag, struct{}{})
			if got := testkit.Recv(t, startWait(t, e, ctx, settled, ag, "60"), "the wait's answer"); got.status != 200 || got.body["status"] != "cancelled" {
				t.Fatalf("a settled request at the cap: %+v", got)
			}
			// Another caller is not refused for this one's waits: the operator may wait.
			go e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 1, "decision": "deny"})
			testkit.Recv(t, a, "the first wait")
			testkit.Recv(t, b, "the second wait")
			testkit.Recv(t, ended, "the wait to end")
			testkit.Recv(t, ended, "the wait to end")
		})

		t.Run("a client that goes away releases its slot", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			wctx, cancel := context.WithCancel(ctx)
			w := startWait(t, e, wctx, id, ag, "300")
			ev.held(t, 1)
			cancel()
			testkit.Recv(t, w, "the wait's answer")
			testkit.Recv(t, ended, "the wait to end")
			if n := e.Server.Waiters(); n != 0 {
				t.Fatalf("%d waits still held", n)
			}
		})

		t.Run("expiry with a default releases the waiter with the default", func(t *testing.T) {
			id := e.File(ag, map[string]any{"default_option": "deny", "expires_in": 60})["id"].(string)
			w := startWait(t, e, ctx, id, ag, "60")
			ev.held(t, 1)
			s := *e.Store
			s.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
			if _, _, err := s.Expire(ctx); err != nil {
				t.Fatal(err)
			}
			got := testkit.Recv(t, w, "the wait's answer")
			if got.body["status"] != "resolved" || got.body["decision"] != "deny" || got.body["decided_via"] != "expiry" {
				t.Fatalf("%+v", got)
			}
			testkit.Recv(t, ended, "the wait to end")
		})
	}
}

func TestWaitReleasedOnShutdown(t *testing.T) {
	// The database pool's opener lives until the test's cleanup closes it.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
	ev, cfg := newEvents()
	ended := ev.ended
	store, changes := storetest.Store(t, "sqlite")
	e := webtest.NewOn(t, store, changes, cfg)
	ag := e.Token(models.RoleAgent, "a")
	id := e.File(ag, nil)["id"].(string)
	w := startWait(t, e, context.Background(), id, ag, "300")
	ev.held(t, 1)
	// Stopping the assembly, as serve does at a signal, answers the wait first.
	e.Stop()
	got := testkit.Recv(t, w, "the wait's answer")
	if got.status != 200 || got.body["timed_out"] != true {
		t.Fatalf("%+v", got)
	}
	testkit.Recv(t, ended, "the wait to end")
}
