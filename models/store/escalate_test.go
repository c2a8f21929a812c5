package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// onCall is the release team's chain: release decides; after 10 minutes
// release-oncall may too; after 30 the request halts.
func onCall() *models.Approvers {
	return &models.Approvers{Groups: []string{"release"}, Required: 1, Escalate: []models.EscalationStep{
		{After: "10m", To: &models.EscalationTo{Groups: []string{"release-oncall"}}},
		{After: "30m", Then: models.ThenHalt},
	}}
}

// sharedClock is one store clock for every replica of a test, moved by hand.
type sharedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *sharedClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *sharedClock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// escalationRig is two replicas on one database with one clock, the release
// team (alice), its on-call (bob) and an agent.
type escalationRig struct {
	a, b       *store.Store
	clock      *sharedClock
	t0         time.Time
	alice, bob models.Principal
	filer      models.Principal
}

func newEscalationRig(t *testing.T, dialect string) *escalationRig {
	t.Helper()
	a, b := replicas(t, dialect)
	rg := &escalationRig{a: a, b: b, clock: &sharedClock{}}
	rg.t0 = time.Now().UTC().Truncate(time.Second)
	rg.clock.set(rg.t0)
	a.Now, b.Now = rg.clock.Now, rg.clock.Now
	rg.alice = voter(t, a, "alice", "release")
	rg.bob = voter(t, a, "bob", "release-oncall")
	rg.filer = agent(t, a, "filer")
	return rg
}

// at files a request at t0 and moves the clock to t0+d.
func (rg *escalationRig) at(d time.Duration) { rg.clock.set(rg.t0.Add(d)) }

// sweepBoth runs Escalate on both replicas at the same instant and returns
// how many steps fired in all.
func (rg *escalationRig) sweepBoth(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := make(chan struct{})
	out := make(chan int, 2)
	for _, s := range []*store.Store{rg.a, rg.b} {
		go func() {
			<-start
			n, _, err := s.Escalate(ctx)
			if err != nil {
				t.Error(err)
			}
			out <- n
		}()
	}
	close(start)
	total := 0
	for range 2 {
		select {
		case n := <-out:
			total += n
		case <-ctx.Done():
			t.Fatal("a sweep did not return within 20s")
		}
	}
	return total
}

// count counts the entries of an action in a trail of "action/via".
func count(actions []string, action string) int {
	n := 0
	for _, a := range actions {
		if a == action || strings.HasPrefix(a, action+"/") {
			n++
		}
	}
	return n
}

func TestEscalation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		rg := newEscalationRig(t, dialect)

		t.Run("each step fires once across two replicas, at T and at T2", func(t *testing.T) {
			rg.at(0)
			r := file(t, rg.a, rg.filer, models.NewRequest{Approvers: onCall()})
			if r.EscalateAt == nil || !r.EscalateAt.Equal(rg.t0.Add(10*time.Minute)) {
				t.Fatalf("first step due at %v, want filing time + 10m", r.EscalateAt)
			}
			if r.MayVote(rg.bob) == nil {
				t.Fatal("bob (release-oncall) may vote before any escalation")
			}
			rg.at(10*time.Minute - time.Second)
			if n := rg.sweepBoth(t); n != 0 {
				t.Fatalf("%d steps fired a second early", n)
			}
			rg.at(10 * time.Minute)
			if n := rg.sweepBoth(t); n != 1 {
				t.Fatalf("%d steps fired at T across two replicas, want exactly 1", n)
			}
			got, _ := rg.b.GetRequest(ctx, r.ID)
			if !got.Open() || got.EscalationStep != 1 || got.Version != 2 || len(got.Escalations) != 1 ||
				got.Escalations[0].Why != models.EscalatedDue || !got.Escalations[0].At.Equal(rg.t0.Add(10*time.Minute)) {
				t.Fatalf("after T: %+v", got)
			}
			if why := got.MayVote(rg.bob); why != nil {
				t.Fatalf("bob may not vote after escalating to release-oncall: %v", why)
			}
			if next, _ := rg.a.NextEscalation(ctx); !next.Equal(rg.t0.Add(30 * time.Minute)) {
				t.Fatalf("next step at %v, want filing time + 30m", next)
			}
			if n := rg.sweepBoth(t); n != 0 {
				t.Fatalf("%d steps fired again at T", n)
			}

			rg.at(30 * time.Minute)
			if n := rg.sweepBoth(t); n != 1 {
				t.Fatalf("%d steps fired at T2 across two replicas, want exactly 1", n)
			}
			got, _ = rg.a.GetRequest(ctx, r.ID)
			if got.Status != models.StatusResolved || *got.Decision != "deny" || got.Note == nil || *got.Note != models.HaltNote ||
				*got.DecidedVia != models.ViaEscalation || *got.DecidedBy != "system" || got.DecidedDigest == nil || *got.DecidedDigest != r.ActionDigest() {
				t.Fatalf("after T2: %+v", got)
			}
			acts := actions(t, rg.a, r.ID)
			if count(acts, store.ActionEscalate) != 2 || count(acts, "decide") != 1 {
				t.Fatalf("audit trail %v: want two escalate entries and one decide", acts)
			}
			if next, _ := rg.a.NextEscalation(ctx); !next.IsZero() {
				t.Fatalf("a step still pending at %v", next)
			}
		})

		t.Run("a decision before T: nothing fires", func(t *testing.T) {
			rg.at(0)
			r := file(t, rg.a, rg.filer, models.NewRequest{Approvers: onCall()})
			rg.at(5 * time.Minute)
			if _, err := voteAs(rg.b, rg.alice, r, 1, "once", ""); err != nil {
				t.Fatal(err)
			}
			rg.at(31 * time.Minute)
			if n := rg.sweepBoth(t); n != 0 {
				t.Fatalf("%d steps fired on a decided request", n)
			}
			if acts := actions(t, rg.a, r.ID); count(acts, store.ActionEscalate) != 0 {
				t.Fatalf("audit trail %v has an escalation", acts)
			}
		})

		t.Run("an edit keeps the schedule from filing time", func(t *testing.T) {
			rg.at(0)
			r := file(t, rg.a, rg.filer, models.NewRequest{Approvers: onCall(), Unsealed: true})
			rg.at(8 * time.Minute)
			e, err := rg.a.PatchRequest(ctx, r.ID, rg.filer, store.Patch{Summary: ptr("now with more")})
			if err != nil || e.EscalateAt == nil || !e.EscalateAt.Equal(*r.EscalateAt) {
				t.Fatalf("edit: %v, escalate at %v, want %v", err, e.EscalateAt, r.EscalateAt)
			}
			rg.at(10 * time.Minute)
			if n := rg.sweepBoth(t); n != 1 {
				t.Fatalf("%d steps fired at filing + 10m after an edit at 8m, want 1", n)
			}
			if _, err := voteAs(rg.a, rg.bob, r, 3, "deny", ""); err != nil { // settled, so later sweeps see only their own
				t.Fatal(err)
			}
			rg.at(0)
		})

		t.Run("then default decides a denying default without the halt note", func(t *testing.T) {
			rg.at(0)
			p := onCall()
			p.Escalate[1].Then = models.ThenDefault
			r := file(t, rg.a, rg.filer, models.NewRequest{Approvers: p, DefaultOption: "deny"})
			rg.at(30 * time.Minute)
			if n := rg.sweepBoth(t); n != 2 { // both steps were due: they fire in order
				t.Fatalf("%d steps fired, want 2", n)
			}
			got, _ := rg.a.GetRequest(ctx, r.ID)
			if got.Status != models.StatusResolved || *got.Decision != "deny" || got.Note != nil {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("then default with an allowing default halts: under a policy only people allow", func(t *testing.T) {
			rg.at(0)
			p := onCall()
			p.Escalate[1].Then = models.ThenDefault
			r := file(t, rg.a, rg.filer, models.NewRequest{Approvers: p, DefaultOption: "once"})
			rg.at(30 * time.Minute)
			rg.sweepBoth(t)
			got, _ := rg.a.GetRequest(ctx, r.ID)
			if got.Status != models.StatusResolved || *got.Decision != "deny" || got.Note == nil || *got.Note != models.HaltNote {
				t.Fatalf("%+v", got)
			}
		})

		t.Run("a halt with no deny option left stays open, audited", func(t *testing.T) {
			rg.at(0)
			r := file(t, rg.a, rg.filer, models.NewRequest{Approvers: onCall(), Unsealed: true})
			// The owner edits the deny option away after filing.
			if _, err := rg.a.PatchRequest(ctx, r.ID, rg.filer, store.Patch{Options: &[]models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}}}); err != nil {
				t.Fatal(err)
			}
			rg.at(30 * time.Minute)
			if n := rg.sweepBoth(t); n != 2 {
				t.Fatalf("%d steps fired, want 2", n)
			}
			got, _ := rg.a.GetRequest(ctx, r.ID)
			if !got.Open() || got.EscalationStep != 2 || got.Escalations[1].Option != "" {
				t.Fatalf("%+v", got)
			}
			if n, _, _ := rg.a.Escalate(ctx); n != 0 {
				t.Fatalf("%d steps fired after the last", n)
			}
		})

		t.Run("a filer's halt needs a deny option", func(t *testing.T) {
			_, _, err := rg.a.CreateRequest(ctx, rg.filer, models.NewRequest{Title: "t", Approvers: onCall(),
				Options: []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}}}, "")
			if models.ErrorCode(err) != models.ECodeInvalid {
				t.Fatalf("want invalid_input, got %v", err)
			}
		})

		t.Run("an expired request does not escalate", func(t *testing.T) {
			rg.at(0)
			r := file(t, rg.a, rg.filer, models.NewRequest{Approvers: onCall(), ExpiresIn: 5 * time.Minute})
			rg.at(10 * time.Minute)
			rg.sweepBoth(t)
			if got, _ := rg.a.GetRequest(ctx, r.ID); got.EscalationStep != 0 {
				t.Fatalf("%+v", got)
			}
		})
	})
}

func TestEscalationAway(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		rg := newEscalationRig(t, dialect)
		s := rg.a

		t.Run("every eligible approver away at filing: escalates at once", func(t *testing.T) {
			if _, err := s.SetAway(ctx, rg.alice, true, nil); err != nil {
				t.Fatal(err)
			}
			defer s.SetAway(ctx, rg.alice, false, nil)
			r := file(t, s, rg.filer, models.NewRequest{Approvers: onCall()})
			if r.EscalationStep != 1 || r.Escalations[0].Why != models.EscalatedAway || !r.Open() {
				t.Fatalf("filed: %+v", r)
			}
			if r.MayVote(rg.bob) != nil {
				t.Fatal("bob may not vote after the away escalation")
			}
			if acts := actions(t, s, r.ID); count(acts, store.ActionEscalate) != 1 {
				t.Fatalf("audit %v", acts)
			}
		})

		t.Run("going away escalates what only the away operator could decide", func(t *testing.T) {
			r := file(t, s, rg.filer, models.NewRequest{Approvers: onCall()})
			if r.EscalationStep != 0 {
				t.Fatalf("alice is available, yet: %+v", r)
			}
			if _, err := rg.b.SetAway(ctx, rg.alice, true, nil); err != nil {
				t.Fatal(err)
			}
			defer s.SetAway(ctx, rg.alice, false, nil)
			got, _ := s.GetRequest(ctx, r.ID)
			if got.EscalationStep != 1 || got.Escalations[0].Why != models.EscalatedAway {
				t.Fatalf("after alice went away: %+v", got)
			}
		})

		t.Run("everyone away: the chain runs to its halt at once", func(t *testing.T) {
			for _, p := range []models.Principal{rg.alice, rg.bob} {
				if _, err := s.SetAway(ctx, p, true, nil); err != nil {
					t.Fatal(err)
				}
				defer s.SetAway(ctx, p, false, nil)
			}
			r := file(t, s, rg.filer, models.NewRequest{Approvers: onCall()})
			if r.Status != models.StatusResolved || *r.Decision != "deny" || *r.Note != models.HaltNote || r.EscalationStep != 2 {
				t.Fatalf("%+v", r)
			}
		})

		t.Run("away until a time: back afterwards", func(t *testing.T) {
			rg.at(0)
			until := rg.t0.Add(time.Hour)
			if _, err := s.SetAway(ctx, rg.alice, true, &until); err != nil {
				t.Fatal(err)
			}
			rg.at(2 * time.Hour)
			r := file(t, s, rg.filer, models.NewRequest{Approvers: onCall()})
			if r.EscalationStep != 0 {
				t.Fatalf("alice's away ended an hour ago, yet: %+v", r)
			}
			rg.at(0)
			s.SetAway(ctx, rg.alice, false, nil)
		})

		t.Run("an agent cannot set anyone's availability", func(t *testing.T) {
			as := rg.filer
			as.Name = "alice" // even a token named like the operator
			if _, err := s.SetAway(ctx, as, true, nil); models.ErrorCode(err) != models.ECodeForbidden {
				t.Fatalf("away: %v", err)
			}
			if _, err := s.SetQuietHours(ctx, as, &models.QuietHours{QuietStart: "00:00", QuietEnd: "23:59", QuietTZ: "UTC"}); models.ErrorCode(err) != models.ECodeForbidden {
				t.Fatalf("quiet hours: %v", err)
			}
			if a, _ := s.GetAvailability(ctx, "alice"); a.Away || a.QuietStart != "" {
				t.Fatalf("%+v", a)
			}
		})

		t.Run("away and quiet hours are audited", func(t *testing.T) {
			before, _ := s.AuditEntries(ctx, 0, 0, 100000)
			if _, err := s.SetQuietHours(ctx, rg.bob, &models.QuietHours{QuietStart: "22:00", QuietEnd: "07:00", QuietTZ: "Europe/Berlin"}); err != nil {
				t.Fatal(err)
			}
			after, _ := s.AuditEntries(ctx, 0, 0, 100000)
			if len(after) != len(before)+1 || after[len(after)-1].Action != store.ActionAvailability || after[len(after)-1].Actor != "operator:bob" {
				t.Fatalf("last entry %+v", after[len(after)-1])
			}
		})
	})
}

// TestEscalationFromRules: a require rule's escalation applies to what it
// matches, and a filer may not add another.
func TestEscalationFromRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _, clock := ruledStore(t, dialect, `rules:
  - name: release
    match: {text: release}
    action: require
    approvers:
      groups: [release, release-oncall]
      escalate:
        - {after: 10m, to: {groups: [release-oncall]}}
        - {after: 30m, then: halt}
`)
		voter(t, s, "alice", "release")
		filer := agent(t, s, "filer")
		t0 := *clock
		r := file(t, s, filer, models.NewRequest{Title: "release 1.2"})
		if r.Approvers == nil || len(r.Approvers.Escalate) != 2 || !r.EscalateAt.Equal(t0.Add(10*time.Minute)) {
			t.Fatalf("%+v", r.Approvers)
		}
		_, _, err := s.CreateRequest(ctx, filer, models.NewRequest{Title: "release 1.3", Options: allowDeny(),
			Approvers: &models.Approvers{Required: 1, Escalate: []models.EscalationStep{{After: "1m", Then: "halt"}}}}, "")
		if models.ErrorCode(err) != models.ECodeInvalid {
			t.Fatalf("a filer's own escalation under the rule's: %v", err)
		}
		*clock = t0.Add(30 * time.Minute)
		if n, _, err := s.Escalate(ctx); n != 2 || err != nil {
			t.Fatalf("fired %d: %v", n, err)
		}
		_ = rules.RuleRequire
	})
}
