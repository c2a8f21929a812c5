package store_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// The invariants that keep the agent from getting itself approved, each held
// in the store whatever surface a request came in by.
func TestTrustInvariants(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		bob := voter(t, s, "bob", "release")
		dave := voter(t, s, "dave", "release")
		ag := agent(t, s, "edits")
		two := &models.Approvers{Groups: []string{"release"}, Required: 2}

		// The attack: an unsealed request under a two-person policy; bob
		// votes on v1; the agent rewrites it; dave votes on the new text.
		// Before votes were bound to digests this resolved with [bob, dave],
		// one person having approved the text that runs.
		t.Run("an edit after a vote voids the vote, visibly", func(t *testing.T) {
			r := file(t, s, ag, models.NewRequest{Title: "Run: git status", Approvers: two, Unsealed: true})
			v1, err := voteAs(s, bob, r, 1, "once", "")
			if err != nil || !v1.Open() || v1.VotesFor("once") != 1 {
				t.Fatalf("bob's vote: %+v %v", v1, err)
			}
			title := "DROP DATABASE prod"
			edited, err := s.PatchRequest(ctx, r.ID, ag, store.Patch{Title: &title})
			if err != nil || edited.VotesFor("once") != 0 {
				t.Fatalf("edit: %v, %d standing votes, want 0", err, edited.VotesFor("once"))
			}
			got, err := voteAs(s, dave, edited, edited.Version, "once", "")
			if err != nil || !got.Open() || got.VotesFor("once") != 1 {
				t.Fatalf("dave's vote on the edited text: %+v %v, want open with one standing vote", got, err)
			}
			if rec := got.API(); len(rec.Approvals.Votes) != 2 || !rec.Approvals.Votes[0].Void || rec.Approvals.Votes[1].Void {
				t.Fatalf("the record's votes: %+v, want bob's marked void and dave's standing", rec.Approvals.Votes)
			}
			// bob may vote again, on what he now sees; that vote counts.
			done, err := voteAs(s, bob, got, got.Version, "once", "")
			if err != nil || done.Status != models.StatusResolved || *done.DecidedDigest != got.ActionDigest() {
				t.Fatalf("bob's second vote: %+v %v", done, err)
			}
			trail, _ := s.AuditTrail(ctx, r.ID)
			voided := false
			for _, e := range trail {
				if e.Action == "edit" && strings.Contains(e.Detail, `"votes_voided":1`) {
					voided = true
				}
			}
			if !voided {
				t.Fatal("the edit's audit entry does not say it voided a vote")
			}
		})

		t.Run("an empty edit is refused; an edit that changes nothing changes nothing", func(t *testing.T) {
			r := file(t, s, ag, models.NewRequest{Title: "Run: make", Unsealed: true})
			if _, err := s.PatchRequest(ctx, r.ID, ag, store.Patch{}); models.ErrorCode(err) != models.ECodeInvalid {
				t.Fatalf("empty edit: %v, want %s", err, models.ECodeInvalid)
			}
			before, _ := s.AuditTrail(ctx, r.ID)
			same := r.Title
			got, err := s.PatchRequest(ctx, r.ID, ag, store.Patch{Title: &same})
			if err != nil || got.Version != r.Version {
				t.Fatalf("no-op edit: v%d %v, want v%d", got.Version, err, r.Version)
			}
			after, _ := s.AuditTrail(ctx, r.ID)
			if len(after) != len(before) {
				t.Fatalf("no-op edit wrote %d audit entries", len(after)-len(before))
			}
		})

		t.Run("a key repeated with the same body answers the first record", func(t *testing.T) {
			n := models.NewRequest{Title: "Run: git status", Tool: "Bash", Command: "git status", Options: allowDeny()}
			a, created, err := s.CreateRequest(ctx, ag, n, "same-body")
			if err != nil || !created {
				t.Fatal(err)
			}
			b, created, err := s.CreateRequest(ctx, ag, n, "same-body")
			if err != nil || created || b.ID != a.ID {
				t.Fatalf("repeat: %v %v %v", b, created, err)
			}
		})
	})
}
