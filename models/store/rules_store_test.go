package store_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

const storeRules = `rules:
  - name: git-read
    match:
      command: '^git (status|diff)'
    action: approve
  - name: no-force
    match:
      command: '--force'
    action: deny
  - name: wait-deploy
    match:
      text: deploy
    action: hold
    window: 2m
    then: approve
`

// ruledStore is a store with rules and a clock the test moves.
func ruledStore(t *testing.T, dialect, src string) (*store.Store, *store.Changes, *time.Time) {
	s, ch := storetest.Store(t, dialect)
	s.Rules = rules.NewRuleSet(mustRules(t, src))
	clock := time.Now().UTC().Truncate(time.Second)
	s.Now = func() time.Time { return clock }
	return s, ch, &clock
}

func actions(t *testing.T, s *store.Store, id string) []string {
	t.Helper()
	trail, err := s.AuditTrail(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range trail {
		out = append(out, a.Action+"/"+a.Via)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRulesDecide(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("an empty file leaves every request to the operator", func(t *testing.T) {
			s, _, _ := ruledStore(t, dialect, "")
			p := agent(t, s, "a1")
			for _, cmd := range []string{"git status", "git push --force", ""} {
				r := file(t, s, p, models.NewRequest{Command: cmd, Summary: "deploy"})
				if r.Status != models.StatusOpen || r.Version != 1 || r.DecidedVia != nil || r.Held() {
					t.Fatalf("%q: %+v", cmd, r)
				}
				if got := actions(t, s, r.ID); !equal(got, []string{"create/api"}) {
					t.Fatalf("trail %v", got)
				}
			}
		})

		s, changes, clock := ruledStore(t, dialect, storeRules)
		p := agent(t, s, "a1")

		t.Run("approve: decided at once, audited, announced", func(t *testing.T) {
			sub := changes.Subscribe(8)
			defer sub.Close()
			r, created, err := s.CreateRequest(ctx, p, models.NewRequest{Title: "t", Command: "git status", Options: allowDeny()}, "")
			if err != nil || !created {
				t.Fatal(err)
			}
			if r.Status != models.StatusResolved || *r.Decision != "once" || *r.DecidedVia != "rule:git-read" || *r.DecidedBy != "rule:git-read" || r.Version != 2 {
				t.Fatalf("%+v", r)
			}
			if a, b := testkit.Recv(t, sub.C, "sub.C"), testkit.Recv(t, sub.C, "sub.C"); a.Action != "create" || a.Version != 1 || a.Record.Status != models.StatusOpen ||
				b.Action != "decide" || b.Version != 2 || b.Record.Status != models.StatusResolved {
				t.Fatalf("announced %+v then %+v", a, b)
			}
			if got := actions(t, s, r.ID); !equal(got, []string{"create/api", "decide/rule:git-read"}) {
				t.Fatalf("trail %v", got)
			}
		})

		t.Run("approve: decided in the filing's own commit", func(t *testing.T) {
			var commits atomic.Int32
			store.GroupCommits(s, nil, func(int) { commits.Add(1) })
			defer store.GroupCommits(s, nil, nil)
			r := file(t, s, p, models.NewRequest{Title: "t", Command: "git status", Options: allowDeny()})
			if r.Status != models.StatusResolved || commits.Load() != 1 {
				t.Fatalf("%s after %d commits, want resolved after 1", r.Status, commits.Load())
			}
		})

		t.Run("deny", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Command: "git push --force"})
			if r.Status != models.StatusResolved || *r.Decision != "deny" || *r.DecidedVia != "rule:no-force" {
				t.Fatalf("%+v", r)
			}
		})

		t.Run("a rule without a matching option defers to the operator", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Command: "git push --force", Options: []models.Option{{ID: "once", Label: "Allow", Effect: "allow"}}})
			if r.Status != models.StatusOpen || r.DecidedVia != nil || r.Held() {
				t.Fatalf("%+v", r)
			}
			if got := actions(t, s, r.ID); !equal(got, []string{"create/api", "rule_deferred/rule:no-force"}) {
				t.Fatalf("trail %v", got)
			}
		})

		t.Run("hold: open and marked, then decided when the window ends", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "deploy to prod"})
			if !r.Held() || *r.HoldRule != "wait-deploy" || *r.HoldThen != "once" || !r.HoldUntil.Equal(clock.Add(2*time.Minute)) || r.Version != 1 {
				t.Fatalf("%+v", r)
			}
			stored, _ := s.GetRequest(ctx, r.ID)
			if !stored.Held() || !stored.HoldUntil.Equal(*r.HoldUntil) {
				t.Fatalf("stored %+v", stored)
			}
			n, next, err := s.ReleaseHolds(ctx)
			if err != nil || n != 0 || !next.Equal(*r.HoldUntil) {
				t.Fatalf("before the window ends: %d %v %v", n, next, err)
			}
			w, stop := changes.Watch(r.ID)
			defer stop()
			*clock = clock.Add(2 * time.Minute)
			n, next, err = s.ReleaseHolds(ctx)
			if err != nil || n != 1 || !next.IsZero() {
				t.Fatalf("at the end: %d %v %v", n, next, err)
			}
			testkit.Recv(t, w, "the wait's answer")
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusResolved || *got.Decision != "once" || *got.DecidedVia != "rule:wait-deploy (window)" || got.Version != 2 {
				t.Fatalf("%+v", got)
			}
			if trail := actions(t, s, r.ID); !equal(trail, []string{"create/api", "hold/rule:wait-deploy", "decide/rule:wait-deploy (window)"}) {
				t.Fatalf("trail %v", trail)
			}
			if n, _, _ := s.ReleaseHolds(ctx); n != 0 {
				t.Fatalf("second sweep settled %d", n)
			}
		})

		t.Run("hold: the operator decides first and the window changes nothing", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "deploy"})
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "deny", By: "operator:o", Via: "page"}); err != nil {
				t.Fatal(err)
			}
			*clock = clock.Add(time.Hour / 2)
			if n, next, err := s.ReleaseHolds(ctx); n != 0 || !next.IsZero() || err != nil {
				t.Fatalf("%d %v %v", n, next, err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if *got.Decision != "deny" || *got.DecidedVia != "page" {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("hold: its option withdrawn, the hold lapses to the operator", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "deploy", Unsealed: true})
			// No option allows now: the edit is judged, the rule defers, the hold lapses.
			opts := []models.Option{{ID: "maybe", Label: "Maybe"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
			if _, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Options: &opts}); err != nil {
				t.Fatal(err)
			}
			*clock = clock.Add(3 * time.Minute)
			if n, _, err := s.ReleaseHolds(ctx); n != 0 || err != nil {
				t.Fatalf("%d %v", n, err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusOpen || got.Held() || got.Version != 2 {
				t.Fatalf("%+v", got)
			}
			if trail := actions(t, s, r.ID); !equal(trail, []string{"create/api", "hold/rule:wait-deploy", "edit/api", "hold_lapsed/rule:wait-deploy", "rule_deferred/rule:wait-deploy"}) {
				t.Fatalf("trail %v", trail)
			}
		})

		t.Run("hold past the request's expiry is left to Expire", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "deploy", ExpiresIn: time.Minute, DefaultOption: "deny"})
			*clock = clock.Add(3 * time.Minute)
			if n, _, err := s.ReleaseHolds(ctx); n != 0 || err != nil {
				t.Fatalf("%d %v", n, err)
			}
			if _, _, err := s.Expire(ctx); err != nil {
				t.Fatal(err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if *got.DecidedVia != "expiry" || *got.Decision != "deny" {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("sweeps racing in several processes settle each hold once", func(t *testing.T) {
			var ids []string
			for range 5 {
				ids = append(ids, file(t, s, p, models.NewRequest{Title: "deploy"}).ID)
			}
			*clock = clock.Add(3 * time.Minute)
			total := make(chan int, 4)
			for range 4 {
				other := *s // another process: its own Store on the same database
				go func() {
					n, _, err := other.ReleaseHolds(ctx)
					if err != nil {
						t.Error(err)
					}
					total <- n
				}()
			}
			sum := 0
			for range 4 {
				sum += testkit.Recv(t, total, "total")
			}
			if sum != len(ids) {
				t.Fatalf("settled %d, want %d", sum, len(ids))
			}
			for _, id := range ids {
				trail := actions(t, s, id)
				if last := trail[len(trail)-1]; len(trail) != 3 || last != "decide/rule:wait-deploy (window)" {
					t.Fatalf("trail %v", trail)
				}
			}
		})

		t.Run("reload swaps rules for the next filing", func(t *testing.T) {
			old := s.Rules.Swap(mustRules(t, "rules:\n  - name: all\n    action: deny\n"))
			defer s.Rules.Swap(old)
			r := file(t, s, p, models.NewRequest{Command: "git status"})
			if *r.DecidedVia != "rule:all" {
				t.Fatalf("%+v", r)
			}
		})
	})
}

type sweep struct {
	n    int
	next time.Time
}

func TestHoldSweeper(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		s.Rules = rules.NewRuleSet(mustRules(t, storeRules))
		var clock atomic.Pointer[time.Time]
		start := time.Now().UTC().Truncate(time.Second)
		clock.Store(&start)
		s.Now = func() time.Time { return *clock.Load() }
		move := func(d time.Duration) { t := clock.Load().Add(d); clock.Store(&t) }
		p := agent(t, s, "a1")

		// The sweeper hears of filings from its own fan-out, so the test says
		// when a filing is heard: after it has moved the clock.
		heard := store.NewChanges()
		swept := make(chan sweep, 16)
		sw := &store.HoldSweeper{Store: s, Changes: heard,
			Swept: func(n int, next time.Time, err error) {
				if err != nil {
					t.Errorf("sweep: %v", err)
				}
				swept <- sweep{n, next}
			}}

		// A hold filed while no sweeper ran, whose window has ended: the first
		// sweep settles it.
		late := file(t, s, p, models.NewRequest{Title: "deploy"})
		move(5 * time.Minute)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { sw.Run(runCtx); close(done) }()
		defer func() { cancel(); <-done }()

		t.Run("the first sweep settles what ended while none ran", func(t *testing.T) {
			if got := recv(t, swept); got.n != 1 || !got.next.IsZero() {
				t.Fatalf("%+v", got)
			}
			got, _ := s.GetRequest(ctx, late.ID)
			if *got.DecidedVia != "rule:wait-deploy (window)" {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("a filing wakes it and it fires when the window ends", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "deploy"})
			move(2 * time.Minute)
			heard.Announce(models.Change{RequestID: r.ID, Version: 1, Status: models.StatusOpen, Action: "create"})
			if got := recv(t, swept); got.n != 1 {
				t.Fatalf("%+v", got)
			}
		})
	})
}

// recv takes one value from ch; a test that would hang fails instead.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing arrived in 10s")
		panic("unreachable")
	}
}

func mustRules(t testing.TB, src string) *rules.Rules {
	t.Helper()
	rs, err := rules.ParseRules("rules.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return rs
}
