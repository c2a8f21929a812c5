package main_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/jackc/pgx/v5"
)

// releaseGuard is how long a test waits for a cross-replica release before
// calling it missed: far below the waits' 300 s timeout, far above any release.
const releaseGuard = 60 * time.Second

// TestReplicas runs two `gatehouse serve` processes on one PostgreSQL database:
// a change made on either releases the long-polls held on the other. Real
// processes, because what crosses between replicas is PostgreSQL NOTIFY, not
// anything a single process could share by accident.
func TestReplicas(t *testing.T) {
	database := storetest.URL(t, "postgres")
	bin := gatehousetest.Build(t)
	// Both start at once on the empty database: their migrations must not race.
	r1 := gatehousetest.Launch(t, bin, database)
	r2 := gatehousetest.Launch(t, bin, database)
	r1.Ready(t)
	r2.Ready(t)
	opToken := gatehousetest.Token(t, bin, database, "operator", "ops")
	agentToken := gatehousetest.Token(t, bin, database, "agent", "builder")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	filer, waiter := r1.Client(agentToken), r2.Client(agentToken)
	op1, op2 := r1.Client(opToken), r2.Client(opToken)
	file := func(t *testing.T, n api.NewRequest) *api.Request {
		t.Helper()
		n.Title = "Push to main"
		n.Options = []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
		r, err := filer.File(ctx, n, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// waited is a long-poll's answer and when it came.
	type waited struct {
		r   *api.Wait
		err error
		at  time.Time
	}
	// released returns the wait's answer. A wait that missed the change would
	// still answer the settled record, but only at its 300 s timeout; the guard
	// catches that long before, so it tells "woken" from "not woken" and is no
	// speed assertion.
	released := func(t *testing.T, w <-chan waited) waited {
		t.Helper()
		select {
		case got := <-w:
			if got.err != nil {
				t.Fatal(got.err)
			}
			return got
		case <-time.After(releaseGuard):
			t.Fatalf("the waiter was not released by the change (it would answer only at its 300 s timeout)")
		}
		return waited{}
	}
	// hold starts a long-poll through c and answers its result on the channel.
	hold := func(c *client.Client, id string) <-chan waited {
		out := make(chan waited, 1)
		go func() {
			r, err := c.Wait(ctx, id, 300*time.Second)
			out <- waited{r, err, time.Now()}
		}()
		return out
	}

	// holdOn starts a long-poll through c on server s and returns once s holds it.
	holdOn := func(t *testing.T, s *gatehousetest.Server, c *client.Client, id string) <-chan waited {
		t.Helper()
		s.AwaitWaiters(t, opToken, 0)
		w := hold(c, id)
		s.AwaitWaiters(t, opToken, 1)
		return w
	}

	t.Run("a decide on replica 1 releases a waiter on replica 2", func(t *testing.T) {
		r := file(t, api.NewRequest{})
		w := holdOn(t, r2, waiter, r.ID)
		start := time.Now()
		if _, err := op1.Decide(ctx, r.ID, r.Version, "once", ""); err != nil {
			t.Fatal(err)
		}
		got := released(t, w)
		if got.r.TimedOut || got.r.Status != "resolved" || got.r.Decision == nil || *got.r.Decision != "once" || got.r.Version != 2 {
			t.Fatalf("waiter on replica 2 got %+v, want the decision", got.r)
		}
		t.Logf("decide sent on replica 1 -> wait answered on replica 2: %s", got.at.Sub(start))
	})

	t.Run("an edit on replica 1 releases a waiter on replica 2 with the record still open", func(t *testing.T) {
		unsealed := false
		r := file(t, api.NewRequest{Sealed: &unsealed})
		w := holdOn(t, r2, waiter, r.ID)
		var edited api.Request
		if err := filer.Do(ctx, "PATCH", "/v1/requests/"+r.ID, nil, map[string]any{"version": r.Version, "summary": "now with tags"}, &edited); err != nil {
			t.Fatal(err)
		}
		got := released(t, w)
		if got.r.TimedOut || got.r.Status != "open" || got.r.Version != 2 || got.r.Summary != "now with tags" {
			t.Fatalf("waiter on replica 2 got %+v, want the edited open record", got.r)
		}
	})

	t.Run("a decide on replica 2 releases a waiter on replica 1", func(t *testing.T) {
		r := file(t, api.NewRequest{})
		w := holdOn(t, r1, filer, r.ID)
		if _, err := op2.Decide(ctx, r.ID, r.Version, "deny", ""); err != nil {
			t.Fatal(err)
		}
		if got := released(t, w); got.r.TimedOut || got.r.Status != "resolved" || *got.r.Decision != "deny" {
			t.Fatalf("waiter on replica 1 got %+v, want the decision", got.r)
		}
	})

	t.Run("a replica whose listen connection dropped reconnects and still releases its waiter", func(t *testing.T) {
		r := file(t, api.NewRequest{})
		w := holdOn(t, r2, waiter, r.ID)
		if n := r2.Metric(t, opToken, "gatehouse_change_listens_total"); n != 1 {
			t.Fatalf("replica 2 listened %v times before the drop, want 1", n)
		}
		dropListener(t, database, r2.Pid())
		// The drop has completed: replica 2 hears nothing until it reconnects.
		if _, err := op1.Decide(ctx, r.ID, r.Version, "once", ""); err != nil {
			t.Fatal(err)
		}
		if got := released(t, w); got.r.TimedOut || got.r.Status != "resolved" {
			t.Fatalf("waiter on replica 2 got %+v, want the decision", got.r)
		}
		if n := r2.Metric(t, opToken, "gatehouse_change_listens_total"); n != 2 {
			t.Fatalf("replica 2 listened %v times, want 2 (one reconnect)", n)
		}
	})

	t.Run("a page connected to the second replica sees a decide made on the first", func(t *testing.T) {
		// The read deadline is a hang guard: a missed change would leave the
		// page waiting for a fragment that never comes.
		pctx, cancel := context.WithTimeout(ctx, releaseGuard)
		defer cancel()
		page := openLivePage(pctx, t, r2, opToken, "/ws?status=open")
		start := time.Now()
		r := file(t, api.NewRequest{})
		card := "#req-" + r.ID
		page.await(pctx, t, func(doc *goquery.Document) bool {
			return doc.Find(`div[hx-swap-oob="afterbegin:#inbox-list"] `+card).Length() == 1
		})
		t.Logf("filed on replica 1 -> card on replica 2's page: %s", time.Since(start))
		start = time.Now()
		if _, err := op1.Decide(ctx, r.ID, r.Version, "once", ""); err != nil {
			t.Fatal(err)
		}
		page.await(pctx, t, func(doc *goquery.Document) bool {
			return doc.Find(card).AttrOr("hx-swap-oob", "") == "delete"
		})
		t.Logf("decided on replica 1 -> card removed from replica 2's page: %s", time.Since(start))
	})

	t.Run("a browser on the second replica sees a decide made on the first", func(t *testing.T) {
		browser := openBrowser(t, r2, opToken)
		start := time.Now()
		r := file(t, api.NewRequest{})
		card := chromedp.CSS("#req-" + r.ID)
		browse(t, browser, "the card appears on replica 2", chromedp.WaitVisible(card))
		t.Logf("filed on replica 1 -> card shown by Chromium on replica 2: %s", time.Since(start))
		start = time.Now()
		if _, err := op1.Decide(ctx, r.ID, r.Version, "once", ""); err != nil {
			t.Fatal(err)
		}
		browse(t, browser, "the card leaves replica 2's page", chromedp.WaitNotPresent(card))
		t.Logf("decided on replica 1 -> card gone in Chromium on replica 2: %s", time.Since(start))
	})

	t.Run("an expiry is settled once across replicas and releases waiters on both", func(t *testing.T) {
		r := file(t, api.NewRequest{ExpiresIn: new(int64(1)), DefaultOption: "deny"})
		w1, w2 := hold(filer, r.ID), hold(waiter, r.ID)
		for _, got := range []waited{released(t, w1), released(t, w2)} {
			if got.r.TimedOut || got.r.Status != "resolved" || got.r.DecidedVia == nil || *got.r.DecidedVia != "expiry" {
				t.Fatalf("waiter got %+v, want the expiry decision", got.r)
			}
		}
		var trail struct {
			Entries []struct{ Action string } `json:"entries"`
		}
		if err := op1.Do(ctx, "GET", "/v1/requests/"+r.ID+"/audit", nil, nil, &trail); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range trail.Entries {
			if e.Action == "expire" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("audit trail has %d expire events, want 1: %+v", n, trail.Entries)
		}
	})
}

// dropListener terminates the LISTEN connection of the serve process pid and
// returns once that backend has exited.
func dropListener(t *testing.T, database string, pid int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, database)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed []bool
	rows, err := conn.Query(ctx, `SELECT pg_terminate_backend(pid, 30000) FROM pg_stat_activity
		WHERE application_name LIKE $1 || '%:' || $2`, store.ListenAppName, strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	if killed, err = pgx.CollectRows(rows, pgx.RowTo[bool]); err != nil {
		t.Fatal(err)
	}
	if len(killed) != 1 || !killed[0] {
		t.Fatalf("terminated %v listen connections of process %d, want one", killed, pid)
	}
}
