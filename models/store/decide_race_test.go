package store_test

import (
	"errors"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestDecideChangedAfterItsRead: a decision is read and checked outside the
// writer's transaction, so something may commit in between. Whatever did, the
// late decision writes nothing and is told what happened, with the request as
// it now stands.
func TestDecideChangedAfterItsRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "a1")
		// between commits change while the decision under test is between
		// its read and its write, once.
		between := func(change func(r *models.Request)) {
			store.OnDecideRead(s, func(r *models.Request) {
				store.OnDecideRead(s, nil)
				change(r)
			})
			t.Cleanup(func() { store.OnDecideRead(s, nil) })
		}

		t.Run("another decision: already decided, and the first one stands", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{})
			between(func(*models.Request) {
				if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "deny", By: "operator:b", Via: "api"}); err != nil {
					t.Errorf("the decision in between: %v", err)
				}
			})
			_, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:a", Via: "api"})
			var e *models.Error
			if models.ErrorCode(err) != models.ECodeAlreadyDecided || !errors.As(err, &e) || e.Current == nil || *e.Current.Decision != "deny" {
				t.Fatalf("late decision: %v", err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if *got.Decision != "deny" || *got.DecidedBy != "operator:b" || got.Version != 2 {
				t.Fatalf("stored %s by %s v%d", *got.Decision, *got.DecidedBy, got.Version)
			}
			if trail := actions(t, s, r.ID); !equal(trail, []string{"create/api", "decide/api"}) {
				t.Fatalf("trail %v", trail)
			}
		})

		t.Run("an edit: version conflict, nothing decided", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Unsealed: true})
			between(func(*models.Request) {
				if _, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Summary: ptr("now it deletes the branch")}); err != nil {
					t.Errorf("the edit in between: %v", err)
				}
			})
			_, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:a", Via: "api"})
			if models.ErrorCode(err) != models.ECodeVersionConflict {
				t.Fatalf("decision on the unedited version: %v", err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusOpen || got.Version != 2 || got.Decision != nil {
				t.Fatalf("stored %s v%d", got.Status, got.Version)
			}
		})

		t.Run("another vote: one counts per version, the late voter can vote again", func(t *testing.T) {
			alice, bob := voter(t, s, "alice-r", "release"), voter(t, s, "bob-r", "release")
			r := file(t, s, p, models.NewRequest{Approvers: &models.Approvers{Groups: []string{"release"}, Required: 2}})
			between(func(*models.Request) {
				if _, err := voteAs(s, bob, r, 1, "once", ""); err != nil {
					t.Errorf("the vote in between: %v", err)
				}
			})
			if _, err := voteAs(s, alice, r, 1, "once", ""); models.ErrorCode(err) != models.ECodeVersionConflict {
				t.Fatalf("the late vote: %v", err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusOpen || got.Version != 2 || got.VotesFor("once") != 1 {
				t.Fatalf("after one vote: %s v%d, %d votes", got.Status, got.Version, got.VotesFor("once"))
			}
			done, err := voteAs(s, alice, r, 2, "once", "")
			if err != nil || done.Status != models.StatusResolved || done.VotesFor("once") != 2 {
				t.Fatalf("the second vote on the new version: %v", err)
			}
		})
	})
}
