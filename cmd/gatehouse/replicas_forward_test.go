package main_test

import (
	"context"
	"encoding/json"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// forwardGuard is how long a test waits for a forward: above the forwarder's
// one-minute claim lease, which a killed replica's claim must outlive.
const forwardGuard = 3 * time.Minute

// delivery is one POST a runtime's callback received.
type delivery struct {
	RequestID string `json:"requestId"`
	Version   int    `json:"version"`
}

// callback is a runtime's callback server. While hold is set it takes a
// delivery and never answers (until the sender goes away), as a runtime would
// that is slow when its server dies.
type callback struct {
	*httptest.Server
	deliveries chan delivery
	hold       chan bool
}

func newCallback(t *testing.T) *callback {
	cb := &callback{deliveries: make(chan delivery, 16), hold: make(chan bool, 1)}
	cb.hold <- false
	stop := make(chan struct{})
	cb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/permissions/decide" {
			http.NotFound(w, r)
			return
		}
		var d delivery
		if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		hold := <-cb.hold // a handler goroutine; the test's own waits are bounded
		cb.hold <- hold
		cb.deliveries <- d
		if hold {
			select {
			case <-r.Context().Done(): // the sending replica died
			case <-stop:
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() { close(stop); cb.Close() })
	return cb
}

func (cb *callback) setHold(v bool) { <-cb.hold; cb.hold <- v }

func (cb *callback) next(t *testing.T) delivery {
	t.Helper()
	select {
	case d := <-cb.deliveries:
		return d
	case <-time.After(forwardGuard):
		t.Fatal("no delivery reached the runtime")
	}
	return delivery{}
}

// TestReplicasForward: a decision bound for a runtime is delivered once with
// two replicas, and a forward in flight on a replica that dies is delivered by
// another. It needs forwarding (POST /v1/runtimes) and skips without it.
func TestReplicasForward(t *testing.T) {
	database := storetest.URL(t, "postgres")
	bin := gatehousetest.Build(t)
	r1 := gatehousetest.Start(t, bin, database)
	opToken := gatehousetest.Token(t, bin, database, "operator", "ops")
	rtToken := gatehousetest.Token(t, bin, database, "runtime", "laptop")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cb := newCallback(t)
	var rt struct {
		ID string `json:"id"`
	}
	err := r1.Client(rtToken).Do(ctx, http.MethodPost, "/v1/runtimes", nil, map[string]any{"name": "laptop", "machine": "m1", "callback_url": cb.URL}, &rt)
	if err != nil {
		t.Fatal(err)
	}
	file := func(t *testing.T, s *gatehousetest.Server) *api.Request {
		t.Helper()
		r, err := s.Client(rtToken).File(ctx, api.NewRequest{
			Title: "Push to main", RuntimeID: &rt.ID,
			Options: []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
		}, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// delivered reads the request until its actuation is final: no replica may
	// claim the forward after that, so the deliveries counted then are all.
	delivered := func(t *testing.T, s *gatehousetest.Server, id string) *api.Request {
		t.Helper()
		deadline := time.Now().Add(forwardGuard)
		for time.Now().Before(deadline) {
			r, err := s.Client(opToken).Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Actuation.State != "pending" && r.Actuation.State != "none" {
				return r
			}
		}
		t.Fatalf("the forward of %s never settled", id)
		return nil
	}

	var r2 *gatehousetest.Server
	parent := t // replicas started in a subtest live for the whole test
	t.Run("a forward in flight on a replica that dies is delivered by the other", func(t *testing.T) {
		cb.setHold(true)
		r := file(t, r1)
		if _, err := r1.Client(opToken).Decide(ctx, r.ID, r.Version, "once", ""); err != nil {
			t.Fatal(err)
		}
		if d := cb.next(t); d.RequestID != r.ID || d.Version != 2 {
			t.Fatalf("first delivery %+v, want %s version 2", d, r.ID)
		}
		// Replica 1 holds the claim and waits on the runtime; replica 2 starts
		// now, finds the row claimed, and must take it over when replica 1 dies.
		r2 = gatehousetest.Start(parent, bin, database)
		cb.setHold(false)
		r1.Kill()
		if d := cb.next(t); d.RequestID != r.ID || d.Version != 2 {
			t.Fatalf("redelivery %+v, want %s version 2", d, r.ID)
		}
		if got := delivered(t, r2, r.ID); got.Actuation.State != "delivered" {
			t.Fatalf("actuation %+v, want delivered", got.Actuation)
		}
	})

	t.Run("a decision is forwarded exactly once with two replicas", func(t *testing.T) {
		if r2 == nil {
			t.Fatal("the previous subtest failed before it left a second replica")
		}
		r3 := gatehousetest.Start(t, bin, database)
		for len(cb.deliveries) > 0 { // retries of the previous case, all made before it settled
			testkit.Recv(t, cb.deliveries, "cb.deliveries")
		}
		r := file(t, r2)
		if _, err := r3.Client(opToken).Decide(ctx, r.ID, r.Version, "deny", ""); err != nil {
			t.Fatal(err)
		}
		if d := cb.next(t); d.RequestID != r.ID || d.Version != 2 {
			t.Fatalf("delivery %+v, want %s version 2", d, r.ID)
		}
		if got := delivered(t, r2, r.ID); got.Actuation.State != "delivered" || got.Actuation.Attempts != 1 {
			t.Fatalf("actuation %+v, want delivered on the first attempt", got.Actuation)
		}
		select {
		case d := <-cb.deliveries:
			t.Fatalf("a second delivery %+v: the forward went out twice", d)
		default:
		}
	})
}
