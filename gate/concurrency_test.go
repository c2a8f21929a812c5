package gate_test

import (
	"context"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestExactlyOnceUnderConcurrentRetries: 64 identical retries of an approved
// request race; the upstream sees it once and the other 63 are refused.
func TestExactlyOnceUnderConcurrentRetries(t *testing.T) {
	storetest.Each(t, exactlyOnce)
}

func exactlyOnce(t *testing.T, dialect string) {
	e := newEnvOn(t, dialect)
	id, req := e.ask(t, "PUT", mergePath, mergeBody)
	e.gh.decide(t, req, "approve")
	start := make(chan struct{})
	answers := make([]answer, 64)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			<-start
			answers[i] = e.send(t, "PUT", mergePath, mergeBody)
		})
	}
	close(start)
	testkit.Wait(t, &wg, "the concurrent calls to finish")
	ok, refused, filed := 0, 0, map[any]bool{}
	for _, a := range answers {
		switch m := a.JSON(t); {
		case a.Status == 200:
			ok++
		case a.Status == 403 && m["error"] == "approval_pending" && m["pending_id"] != id:
			refused++ // the same request again is a new one: a person is asked again
			filed[m["pending_id"]] = true
		default:
			t.Errorf("retry answered %d %s", a.Status, a.Body)
		}
	}
	if ok != 1 || refused != 63 {
		t.Fatalf("%d forwarded, %d refused; want 1 and 63", ok, refused)
	}
	// Racing asks share filings: the operator gets a card or a few, not 63.
	t.Logf("the 63 refusals name %d new grants", len(filed))
	if len(filed) > 32 {
		t.Fatalf("the 63 refusals filed %d grants", len(filed))
	}
	if n := len(e.up.Hits()); n != 1 {
		t.Fatalf("the upstream saw the merge %d times", n)
	}
	if l := e.outcomes(t, "released"); len(l) != 1 || l[0]["pending_id"] != id {
		t.Fatalf("released log: %v", l)
	}
}

// TestManyPendingsLeaveTrafficUntouched: 100 asked requests, each answered at
// once and each waited on at Gatehouse, while ordinary reads keep flowing
// through the gate.
func TestManyPendingsLeaveTrafficUntouched(t *testing.T) {
	const n = 100
	e := newEnv(t)
	idle := timeReads(t, e, n, "idle")
	ids := make([]string, n)
	var wg sync.WaitGroup
	reads := make(chan answer, n)
	for i := range n {
		wg.Go(func() {
			a := e.send(t, "PUT", fmt.Sprintf("/repos/acme/widgets/pulls/%d/merge", i+1), mergeBody)
			if m := a.JSON(t); a.Status == 403 && m["error"] == "approval_pending" {
				ids[i] = m["pending_id"].(string)
			} else {
				t.Errorf("ask %d: %d %s", i, a.Status, a.Body)
			}
		})
		wg.Go(func() { reads <- e.send(t, "GET", fmt.Sprintf("/repos/acme/widgets/pulls/%d", i+1), "") })
	}
	testkit.Wait(t, &wg, "the concurrent calls to finish")
	close(reads)
	for a := range reads {
		if a.Status != 200 {
			t.Fatalf("a read beside the asks: %d %s", a.Status, a.Body)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Every grant now has a waiter parked at Gatehouse, as agents following
	// next_steps would; none of them is a connection to the gate.
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	rt := client.New(e.gh.srv.URL, e.gh.runtime)
	decided := make(chan *api.PendingWait, n)
	waitCtx, stopWaits := context.WithCancel(ctx)
	defer stopWaits()
	for _, id := range ids {
		go func() {
			st, err := rt.WaitPending(waitCtx, id, 300*time.Second)
			if err == nil {
				decided <- st
			}
		}()
	}
	for i := range n {
		select {
		case <-e.gh.parked:
		case <-ctx.Done():
			t.Fatalf("only %d of %d waits parked", i, n)
		}
	}
	loaded := timeReads(t, e, n, "loaded")
	// Reported, not asserted: timings on a shared machine are noise-prone.
	t.Logf("reads through the gate, p50/max: idle %v/%v; with %d pendings parked %v/%v",
		idle[n/2], idle[n-1], n, loaded[n/2], loaded[n-1])
	if got, want := len(e.up.Hits()), 3*n; got != want {
		t.Fatalf("upstream hits %d, want %d reads and no merge", got, want)
	}

	// One decision releases exactly its own request.
	_, req := e.ask(t, "PUT", "/repos/acme/widgets/pulls/42/merge", mergeBody)
	e.gh.decide(t, req, "approve")
	select {
	case st := <-decided:
		if st.PendingID != ids[41] || st.Status != "approved" {
			t.Fatalf("the wait that answered: %+v, want %s approved", st, ids[41])
		}
	case <-ctx.Done():
		t.Fatal("the decided grant's wait never answered")
	}
	if a := e.send(t, "PUT", "/repos/acme/widgets/pulls/42/merge", mergeBody); a.Status != 200 {
		t.Fatalf("the approved merge: %d %s", a.Status, a.Body)
	}
	if a := e.send(t, "PUT", "/repos/acme/widgets/pulls/43/merge", mergeBody); a.Status != 403 {
		t.Fatalf("an undecided merge: %d %s", a.Status, a.Body)
	}
}

// timeReads sends n allowed reads one after another and returns their
// durations, sorted.
func timeReads(t *testing.T, e *env, n int, what string) []time.Duration {
	t.Helper()
	d := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		if a := e.send(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d", i), ""); a.Status != 200 {
			t.Fatalf("%s read %d: %d %s", what, i, a.Status, a.Body)
		}
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	return d
}
