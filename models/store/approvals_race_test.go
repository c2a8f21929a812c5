package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// replicas opens two stores on one database, as two serve processes would.
func replicas(t *testing.T, dialect string) (*store.Store, *store.Store) {
	t.Helper()
	url := storetest.URL(t, dialect)
	open := func() *store.Store {
		return store.NewStore(storetest.Migrated(t, url), store.NewChanges())
	}
	return open(), open()
}

type voteResult struct {
	who string
	r   *models.Request
	err error
}

// race casts two votes at the same instant, one on each replica, and returns
// both results.
func race(t *testing.T, a, b *store.Store, id string, version int, va, vb models.Principal) [2]voteResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := make(chan struct{})
	out := make(chan voteResult, 2)
	for _, c := range []struct {
		s *store.Store
		p models.Principal
	}{{a, va}, {b, vb}} {
		go func() {
			<-start
			p := c.p
			r, err := c.s.Decide(ctx, id, models.Decision{Version: version, Option: "once", By: p.Label(), Via: models.ViaAPI, Voter: &p})
			out <- voteResult{p.Name, r, err}
		}()
	}
	close(start)
	var res [2]voteResult
	for i := range res {
		select {
		case res[i] = <-out:
		case <-ctx.Done():
			t.Fatalf("trial on %s: vote %d did not return within 20s", id, i+1)
		}
	}
	return res
}

// TestVotesAcrossReplicas: two operators vote at the same instant on two
// replicas; exactly one vote counts per version, and the count is exact.
func TestVotesAcrossReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s1, s2 := replicas(t, dialect)
		alice, bob, carol := voter(t, s1, "alice", "release"), voter(t, s1, "bob", "release"), voter(t, s1, "carol", "release")
		filer := agent(t, s1, "filer")
		const trials = 64
		for i := range trials {
			t.Run(fmt.Sprintf("trial %d", i+1), func(t *testing.T) {
				r := file(t, s1, filer, models.NewRequest{Approvers: &models.Approvers{Groups: []string{"release"}, Required: 2}})

				// Two first votes on version 1: one counts, the other is told the request moved on.
				res := race(t, s1, s2, r.ID, 1, alice, bob)
				won, lost := one(t, res, models.ECodeVersionConflict)
				if !won.r.Open() || won.r.Version != 2 || len(won.r.Votes) != 1 {
					t.Fatalf("after the first race: %+v", won.r)
				}
				cur, _ := s2.GetRequest(ctx, r.ID)
				if cur.Version != 2 || len(cur.Votes) != 1 || cur.Votes[0].By != "operator:"+won.who {
					t.Fatalf("stored after the first race: %+v", cur)
				}

				// The loser votes again with carol, on version 2: one resolves it.
				loser := map[string]models.Principal{"alice": alice, "bob": bob}[lost.who]
				res = race(t, s2, s1, r.ID, 2, loser, carol)
				won2, _ := one(t, res, models.ECodeAlreadyDecided)
				if won2.r.Status != models.StatusResolved || len(won2.r.Votes) != 2 {
					t.Fatalf("after the second race: %+v", won2.r)
				}
				cur, _ = s1.GetRequest(ctx, r.ID)
				if cur.Status != models.StatusResolved || cur.Version != 3 || len(cur.Votes) != 2 || *cur.Decision != "once" {
					t.Fatalf("stored after the second race: %+v", cur)
				}
				trail, _ := s1.AuditTrail(ctx, r.ID)
				n := map[string]int{}
				for _, a := range trail {
					n[a.Action]++
				}
				if n["vote"] != 2 || n["decide"] != 1 {
					t.Fatalf("audit %v, want 2 votes and 1 decide", n)
				}
			})
		}
	})
}

// one checks that exactly one of two votes succeeded and the other failed
// with code, and returns the winner and the loser.
func one(t *testing.T, res [2]voteResult, code string) (won, lost voteResult) {
	t.Helper()
	switch {
	case res[0].err == nil && res[1].err != nil:
		won, lost = res[0], res[1]
	case res[1].err == nil && res[0].err != nil:
		won, lost = res[1], res[0]
	default:
		t.Fatalf("want exactly one vote to count: %s: %v, %s: %v", res[0].who, res[0].err, res[1].who, res[1].err)
	}
	if models.ErrorCode(lost.err) != code {
		t.Fatalf("the losing vote: %v, want %s", lost.err, code)
	}
	return won, lost
}
