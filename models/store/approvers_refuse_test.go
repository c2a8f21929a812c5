package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// A policy, the filer's or a rule's, narrows who may approve, never who may
// refuse: any operator may deny (resolving at once) or dismiss. Otherwise an
// agent routes its request to a lenient group and removes everyone else's
// veto.
func TestPolicyNeverNarrowsWhoRefuses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		s.Rules = rules.NewRuleSet(mustRules(t, `rules:
  - name: prod
    match:
      command: '^deploy prod'
    action: require
    approvers:
      groups: [release]
      required: 2
`))
		alice := voter(t, s, "alice", "sre")
		intern := voter(t, s, "ivan", "interns")
		voter(t, s, "rita", "release")
		tok, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleAgent, Name: "alices-agent", For: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		agentForAlice := tok.Principal()
		interns := &models.Approvers{Groups: []string{"interns"}, Required: 1}

		t.Run("an operator outside the filer's groups denies, at once", func(t *testing.T) {
			r := file(t, s, agent(t, s, "a1"), models.NewRequest{Approvers: interns})
			got, err := voteAs(s, alice, r, 1, "deny", "")
			if err != nil || got.Status != models.StatusResolved || *got.Decision != "deny" || *got.DecidedBy != "operator:alice" {
				t.Fatalf("alice's deny: %+v %v", got, err)
			}
		})

		t.Run("but still does not approve", func(t *testing.T) {
			r := file(t, s, agent(t, s, "a2"), models.NewRequest{Approvers: interns})
			if _, err := voteAs(s, alice, r, 1, "once", ""); models.ErrorCode(err) != models.ECodeNotApprover {
				t.Fatalf("alice's allow: %v, want %s", err, models.ECodeNotApprover)
			}
			if got, err := voteAs(s, intern, r, 1, "once", ""); err != nil || *got.Decision != "once" {
				t.Fatalf("the intern's allow: %+v %v", got, err)
			}
		})

		t.Run("an operator outside a require rule's groups denies", func(t *testing.T) {
			r := file(t, s, agent(t, s, "a3"), models.NewRequest{Tool: "Bash", Command: "deploy prod"})
			if r.Approvers == nil || r.Approvers.Groups[0] != "release" || r.Approvers.Required != 2 {
				t.Fatalf("policy %+v, want the rule's", r.Approvers)
			}
			got, err := voteAs(s, alice, r, 1, "deny", "")
			if err != nil || got.Status != models.StatusResolved || *got.Decision != "deny" {
				t.Fatalf("alice's deny under the rule: %+v %v", got, err)
			}
		})

		t.Run("the person a request was filed for may deny it, never approve it", func(t *testing.T) {
			r := file(t, s, agentForAlice, models.NewRequest{Approvers: &models.Approvers{Required: 1}})
			if _, err := voteAs(s, alice, r, 1, "once", ""); models.ErrorCode(err) != models.ECodeSelfApproval {
				t.Fatalf("alice approving her own agent's request: %v, want %s", err, models.ECodeSelfApproval)
			}
			got, err := voteAs(s, alice, r, 1, "deny", "")
			if err != nil || *got.Decision != "deny" {
				t.Fatalf("alice denying her own agent's request: %+v %v", got, err)
			}
		})

		t.Run("an operator who voted allow may still deny", func(t *testing.T) {
			r := file(t, s, agent(t, s, "a4"), models.NewRequest{Approvers: &models.Approvers{Groups: []string{"interns"}, Required: 2}})
			got, err := voteAs(s, intern, r, 1, "once", "")
			if err != nil || !got.Open() {
				t.Fatalf("first vote: %+v %v", got, err)
			}
			got, err = voteAs(s, intern, r, got.Version, "deny", "")
			if err != nil || *got.Decision != "deny" {
				t.Fatalf("the same operator's deny: %+v %v", got, err)
			}
		})

		t.Run("a deny still needs the policy's note, and an agent never votes", func(t *testing.T) {
			r := file(t, s, agent(t, s, "a5"), models.NewRequest{Approvers: &models.Approvers{Groups: []string{"interns"}, Required: 1, Note: models.NoteRequired}})
			if _, err := voteAs(s, alice, r, 1, "deny", ""); models.ErrorCode(err) != models.ECodeNoteRequired {
				t.Fatalf("a deny without the note: %v, want %s", err, models.ECodeNoteRequired)
			}
			if _, err := voteAs(s, agentForAlice, r, 1, "deny", "no"); models.ErrorCode(err) != models.ECodeNotApprover {
				t.Fatalf("an agent's deny: %v, want %s", err, models.ECodeNotApprover)
			}
			if got, err := voteAs(s, alice, r, 1, "deny", "not today"); err != nil || *got.Decision != "deny" {
				t.Fatalf("a deny with its note: %+v %v", got, err)
			}
		})

		t.Run("an operator outside the groups dismisses an item that gates nothing", func(t *testing.T) {
			r := file(t, s, agent(t, s, "a6"), models.NewRequest{Kind: models.KindQuestion, Title: "Which region?",
				Options: []models.Option{{ID: "eu", Label: "EU"}, {ID: "us", Label: "US"}}, Approvers: interns})
			got, err := s.Withdraw(ctx, r.ID, alice, models.StatusDismissed)
			if err != nil || got.Status != models.StatusDismissed {
				t.Fatalf("alice's dismiss: %+v %v", got, err)
			}
		})
	})
}
