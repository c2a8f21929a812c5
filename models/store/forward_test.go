package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func runtimeToken(t *testing.T, s *store.Store, name string) models.Principal {
	t.Helper()
	tok, _, err := s.CreateToken(ctx, models.RoleRuntime, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Principal()
}

func register(t *testing.T, s *store.Store, p models.Principal, name, callback string) *models.Runtime {
	t.Helper()
	rt, _, err := s.RegisterRuntime(ctx, p, models.RuntimeInput{Name: name, Machine: "m1", CallbackURL: callback})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestRuntimes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p1, p2 := runtimeToken(t, s, "r1"), runtimeToken(t, s, "r2")

		t.Run("registering the same name again updates the runtime", func(t *testing.T) {
			first, created, err := s.RegisterRuntime(ctx, p1, models.RuntimeInput{Name: "laptop", Machine: "m1"})
			if err != nil || !created {
				t.Fatalf("first: %v %v", created, err)
			}
			again, created, err := s.RegisterRuntime(ctx, p1, models.RuntimeInput{Name: "laptop", Machine: "m2", CallbackURL: "http://127.0.0.1:9/"})
			if err != nil || created {
				t.Fatalf("again: %v %v", created, err)
			}
			if again.ID != first.ID || again.Machine != "m2" || again.CallbackURL != "http://127.0.0.1:9" {
				t.Fatalf("again = %+v, want the same id updated", again)
			}
			other, created, err := s.RegisterRuntime(ctx, p2, models.RuntimeInput{Name: "laptop", Machine: "m1"})
			if err != nil || !created || other.ID == first.ID {
				t.Fatalf("another token's runtime of the same name must be its own: %v %v", created, err)
			}
		})

		t.Run("bad registrations are refused", func(t *testing.T) {
			for _, in := range []models.RuntimeInput{
				{Name: "", Machine: "m"},
				{Name: "x", Machine: ""},
				{Name: "x", Machine: "m", CallbackURL: "ftp://host"},
				{Name: "x", Machine: "m", CallbackURL: "/relative"},
			} {
				if _, _, err := s.RegisterRuntime(ctx, p1, in); models.ErrorCode(err) != models.ECodeInvalid {
					t.Fatalf("%+v: err = %v, want invalid_input", in, err)
				}
			}
		})

		t.Run("a request may name only a runtime its filer registered", func(t *testing.T) {
			mine := register(t, s, p1, "mine", "")
			theirs := register(t, s, p2, "theirs", "")
			_, _, err := s.CreateRequest(ctx, p1, models.NewRequest{Title: "x", Options: allowDeny(), RuntimeID: &theirs.ID}, "")
			if models.ErrorCode(err) != models.ECodeInvalid {
				t.Fatalf("someone else's runtime: err = %v, want invalid_input", err)
			}
			r := file(t, s, p1, models.NewRequest{RuntimeID: &mine.ID})
			if r.RuntimeID == nil || *r.RuntimeID != mine.ID {
				t.Fatalf("runtime_id = %v", r.RuntimeID)
			}
		})

		t.Run("operators list all runtimes, a runtime its own", func(t *testing.T) {
			all, err := s.ListRuntimes(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			own, err := s.ListRuntimes(ctx, p2.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 4 || len(own) != 2 {
				t.Fatalf("all = %d, own = %d; want 4 and 2", len(all), len(own))
			}
		})

		t.Run("the signing key is made once and kept", func(t *testing.T) {
			k1, err := s.SigningKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			k2, err := s.SigningKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if k1.ID != k2.ID || string(k1.Public) != string(k2.Public) || len(k1.Seed) != 32 {
				t.Fatalf("keys differ: %s %s", k1.ID, k2.ID)
			}
		})
	})
}

func TestOutbox(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		p := runtimeToken(t, s, "r1")
		rt := register(t, s, p, "laptop", "http://127.0.0.1:9")

		t.Run("a decision writes its outbox row in the same commit", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{RuntimeID: &rt.ID})
			note := "go ahead"
			got, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", Note: &note, By: "operator:o", Via: "api"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != 2 || got.ActuationState != models.ActuationPending {
				t.Fatalf("decided: version %d actuation %q", got.Version, got.ActuationState)
			}
			stored, _ := s.GetRequest(ctx, r.ID)
			if stored.Version != 2 || stored.ActuationState != models.ActuationPending {
				t.Fatalf("stored: version %d actuation %q", stored.Version, stored.ActuationState)
			}
			f, err := s.ForwardOf(ctx, r.ID, 2)
			if err != nil {
				t.Fatal(err)
			}
			if f.State != models.ActuationPending || f.RuntimeID != rt.ID || *f.Decision != "once" || *f.Note != note || f.Seq != 1 {
				t.Fatalf("forward = %+v", f)
			}
		})

		t.Run("a request without a runtime writes none", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{})
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ForwardOf(ctx, r.ID, 2); models.ErrorCode(err) != models.ECodeNotFound {
				t.Fatalf("err = %v, want not_found", err)
			}
		})

		t.Run("an expiry with a default forwards too", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{RuntimeID: &rt.ID, DefaultOption: "deny", ExpiresIn: time.Second})
			clock := s.Now
			s.Now = func() time.Time { return clock().Add(2 * time.Second) }
			defer func() { s.Now = clock }()
			if _, _, err := s.Expire(ctx); err != nil {
				t.Fatal(err)
			}
			f, err := s.ForwardOf(ctx, r.ID, 2)
			if err != nil {
				t.Fatal(err)
			}
			if *f.Decision != "deny" || f.Deadline.Before(f.CreatedAt.Add(store.MinForwardWindow)) {
				t.Fatalf("forward = %+v; want deny with at least the minimum retry window", f)
			}
		})

		t.Run("concurrent claimers never take the same row", func(t *testing.T) {
			// The expiry's row was written a few seconds ahead; look from later.
			clock := s.Now
			s.Now = func() time.Time { return clock().Add(time.Minute) }
			defer func() { s.Now = clock }()
			var mu sync.Mutex
			seen := map[uint64]string{}
			var wg sync.WaitGroup
			for i := range 4 {
				owner := models.NewID("p")
				wg.Go(func() {
					rows, err := s.ClaimForwards(ctx, owner, 10, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					for _, f := range rows {
						if prev, ok := seen[f.ID]; ok {
							t.Errorf("row %d claimed by %s and %s (claimer %d)", f.ID, prev, owner, i)
						}
						seen[f.ID] = owner
					}
				})
			}
			testkit.Wait(t, &wg, "the concurrent calls to finish")
			if len(seen) != 2 {
				t.Fatalf("claimed %d rows, want the 2 pending", len(seen))
			}
			if rows, _ := s.ClaimForwards(ctx, "late", 10, time.Minute); len(rows) != 0 {
				t.Fatalf("a claimed row was claimed again: %d", len(rows))
			}
			next, err := s.NextForwardDue(ctx)
			if err != nil || next.IsZero() {
				t.Fatalf("next due = %v %v; want the end of the claims", next, err)
			}
		})

		t.Run("an attempt updates actuation without raising the version, and is audited", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{RuntimeID: &rt.ID})
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
				t.Fatal(err)
			}
			sub := changes.Subscribe(16)
			defer sub.Close()
			// Earlier rows are claimed by the previous subtest; this one is free.
			rows, err := s.ClaimForwards(ctx, "me", 10, time.Minute)
			if err != nil || len(rows) != 1 || rows[0].RequestID != r.ID {
				t.Fatalf("claim: %v %v", rows, err)
			}
			f := rows[0]
			if ok, err := s.FinishForward(ctx, &f, "someone else", store.Attempt{State: models.ActuationDelivered}); ok || err != nil {
				t.Fatalf("a lost claim must record nothing: %v %v", ok, err)
			}
			ok, err := s.FinishForward(ctx, &f, "me", store.Attempt{State: models.ActuationPending, NextAt: time.Now(), HTTPStatus: 503, Error: "HTTP 503"})
			if !ok || err != nil {
				t.Fatalf("finish: %v %v", ok, err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Version != 2 || got.ActuationState != models.ActuationPending || got.Attempts != 1 {
				t.Fatalf("request: version %d, actuation %s/%d", got.Version, got.ActuationState, got.Attempts)
			}
			if ch := testkit.Recv(t, sub.C, "sub.C"); ch.Action != "actuation" || ch.RequestID != r.ID || ch.Version != 2 {
				t.Fatalf("announced %+v", ch)
			}
			trail, _ := s.AuditTrail(ctx, r.ID)
			if last := trail[len(trail)-1]; last.Action != "forward" || last.Version != 2 {
				t.Fatalf("last audit = %+v", last)
			}
			health, _ := s.GetRuntime(ctx, rt.ID)
			if health.Failures != 1 || health.LastResult != "pending: HTTP 503" {
				t.Fatalf("health = %d %q", health.Failures, health.LastResult)
			}
		})

		t.Run("the feed is in sequence order and asking past N delivers N", func(t *testing.T) {
			rows, err := s.DecisionFeed(ctx, rt.ID, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 3 {
				t.Fatalf("feed has %d rows, want 3", len(rows))
			}
			for i, f := range rows {
				if f.Seq != int64(i+1) {
					t.Fatalf("row %d has seq %d", i, f.Seq)
				}
			}
			if err := s.AckFeed(ctx, rt.ID, 2); err != nil {
				t.Fatal(err)
			}
			for i, f := range rows {
				got, _ := s.ForwardOf(ctx, f.RequestID, f.Version)
				want := models.ActuationPending
				if i < 2 {
					want = models.ActuationDelivered
				}
				if got.State != want {
					t.Fatalf("row %d: state %s, want %s", i, got.State, want)
				}
				r, _ := s.GetRequest(ctx, f.RequestID)
				if r.ActuationState != want {
					t.Fatalf("request %d: actuation %s, want %s", i, r.ActuationState, want)
				}
			}
			after, _ := s.DecisionFeed(ctx, rt.ID, 2, 100)
			if len(after) != 1 || after[0].Seq != 3 {
				t.Fatalf("after 2: %+v", after)
			}
		})

		t.Run("concurrent decisions of one runtime get contiguous sequence numbers", func(t *testing.T) {
			other := register(t, s, p, "busy", "")
			ids := make([]string, 8)
			for i := range ids {
				ids[i] = file(t, s, p, models.NewRequest{RuntimeID: &other.ID}).ID
			}
			var wg sync.WaitGroup
			for _, id := range ids {
				wg.Go(func() {
					if _, err := s.Decide(ctx, id, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
						t.Error(err)
					}
				})
			}
			testkit.Wait(t, &wg, "the concurrent calls to finish")
			rows, err := s.DecisionFeed(ctx, other.ID, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(ids) {
				t.Fatalf("feed has %d rows, want %d", len(rows), len(ids))
			}
			for i, f := range rows {
				if f.Seq != int64(i+1) {
					t.Fatalf("row %d has seq %d: a gap a reader could skip", i, f.Seq)
				}
			}
		})
	})
}
