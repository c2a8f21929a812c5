package store_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// voter makes a named operator token and returns the principal it speaks as.
func voter(t *testing.T, s *store.Store, name string, groups ...string) models.Principal {
	t.Helper()
	tok, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleOperator, Name: name, Groups: groups})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Principal()
}

func voteAs(s *store.Store, p models.Principal, r *models.Request, version int, option, note string) (*models.Request, error) {
	d := models.Decision{Version: version, Option: option, By: p.Label(), Via: models.ViaAPI, Voter: &p}
	if note != "" {
		d.Note = &note
	}
	return s.Decide(ctx, r.ID, d)
}

func TestApprovals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		alice := voter(t, s, "alice", "release")
		bob := voter(t, s, "bob", "release", "sre")
		carol := voter(t, s, "carol", "sre")
		dave := voter(t, s, "dave", "release")
		tok, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleAgent, Name: "alices-agent", For: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		agentForAlice := tok.Principal()
		two := &models.Approvers{Groups: []string{"release"}, Required: 2}

		t.Run("two release votes for the same option resolve; the first leaves it open a version higher", func(t *testing.T) {
			r := file(t, s, agentForAlice, models.NewRequest{Approvers: two})
			got, err := voteAs(s, bob, r, 1, "once", "")
			if err != nil || !got.Open() || got.Version != 2 || len(got.Votes) != 1 || got.Votes[0].By != "operator:bob" {
				t.Fatalf("first vote: %+v %v", got, err)
			}
			stored, _ := s.GetRequest(ctx, r.ID)
			if len(stored.Votes) != 1 || stored.Approvers == nil || stored.Approvers.Required != 2 {
				t.Fatalf("stored after one vote: %+v", stored)
			}
			got, err = voteAs(s, dave, r, 2, "once", "")
			if err != nil || got.Status != models.StatusResolved || *got.Decision != "once" || len(got.Votes) != 2 || *got.DecidedBy != "operator:dave" {
				t.Fatalf("second vote: %+v %v", got, err)
			}
			trail, _ := s.AuditTrail(ctx, r.ID)
			var votes, decides int
			for _, a := range trail {
				switch a.Action {
				case "vote":
					votes++
				case "decide":
					decides++
				}
			}
			if votes != 2 || decides != 1 {
				t.Fatalf("audit: %d votes and %d decides, want 2 and 1", votes, decides)
			}
		})

		t.Run("a deny vote resolves at once", func(t *testing.T) {
			r := file(t, s, agentForAlice, models.NewRequest{Approvers: two})
			got, err := voteAs(s, bob, r, 1, "deny", "")
			if err != nil || got.Status != models.StatusResolved || *got.Decision != "deny" {
				t.Fatalf("deny vote: %+v %v", got, err)
			}
		})

		t.Run("votes for different options do not add up", func(t *testing.T) {
			opts := []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "always", Label: "Allow always", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
			r := file(t, s, agentForAlice, models.NewRequest{Approvers: two, Options: opts})
			got, err := voteAs(s, bob, r, 1, "once", "")
			if err != nil {
				t.Fatal(err)
			}
			got, err = voteAs(s, dave, got, 2, "always", "")
			if err != nil || !got.Open() || got.VotesFor("once") != 1 || got.VotesFor("always") != 1 {
				t.Fatalf("split votes: %+v %v", got, err)
			}
		})

		t.Run("refusals change nothing", func(t *testing.T) {
			r := file(t, s, agentForAlice, models.NewRequest{Approvers: &models.Approvers{Groups: []string{"release"}, Required: 2, Note: models.NoteRequired}})
			cases := []struct {
				name    string
				who     models.Principal
				version int
				note    string
				want    string
			}{
				{"an operator outside the groups", carol, 1, "fine", models.ECodeNotApprover},
				{"the operator the filing agent acts for", alice, 1, "mine", models.ECodeSelfApproval},
				{"the filing agent itself", agentForAlice, 1, "mine", models.ECodeNotApprover},
				{"a vote without the required note", bob, 1, "", models.ECodeNoteRequired},
				{"a vote on a stale version", bob, 7, "ok", models.ECodeVersionConflict},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if _, err := voteAs(s, c.who, r, c.version, "once", c.note); models.ErrorCode(err) != c.want {
						t.Fatalf("%v, want %s", err, c.want)
					}
					got, _ := s.GetRequest(ctx, r.ID)
					if got.Version != 1 || len(got.Votes) != 0 {
						t.Fatalf("a refused vote changed the request: %+v", got)
					}
				})
			}
			t.Run("a second vote by the same operator", func(t *testing.T) {
				if _, err := voteAs(s, bob, r, 1, "once", "ship it"); err != nil {
					t.Fatal(err)
				}
				if _, err := voteAs(s, bob, r, 2, "once", "again"); models.ErrorCode(err) != models.ECodeAlreadyVoted {
					t.Fatalf("second vote: %v, want %s", err, models.ECodeAlreadyVoted)
				}
				got, _ := s.GetRequest(ctx, r.ID)
				if got.Version != 2 || len(got.Votes) != 1 || *got.Votes[0].Note != "ship it" {
					t.Fatalf("after a refused second vote: %+v", got)
				}
			})
		})

		t.Run("any operator votes when the policy names no groups", func(t *testing.T) {
			r := file(t, s, agentForAlice, models.NewRequest{Approvers: &models.Approvers{Required: 1}})
			got, err := voteAs(s, carol, r, 1, "once", "")
			if err != nil || got.Status != models.StatusResolved {
				t.Fatalf("%+v %v", got, err)
			}
		})

		t.Run("a bad policy is refused at filing", func(t *testing.T) {
			for name, a := range map[string]*models.Approvers{
				"required zero": {Required: 0},
				"required 21":   {Required: 21},
				"note optional": {Required: 1, Note: "optional"},
				"a bad group":   {Required: 1, Groups: []string{"two words"}},
			} {
				_, _, err := s.CreateRequest(ctx, agentForAlice, models.NewRequest{Title: "t", Options: allowDeny(), Approvers: a}, "")
				if models.ErrorCode(err) != models.ECodeInvalid {
					t.Errorf("%s: %v, want %s", name, err, models.ECodeInvalid)
				}
			}
		})

		t.Run("without a policy any one operator decides, as before", func(t *testing.T) {
			r := file(t, s, agentForAlice, models.NewRequest{})
			got, err := voteAs(s, alice, r, 1, "once", "")
			if err != nil || got.Status != models.StatusResolved || got.Approvers != nil || got.Votes != nil {
				t.Fatalf("%+v %v", got, err)
			}
		})
	})
}

func TestApprovalsAtExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		filer := agent(t, s, "filer")
		policy := &models.Approvers{Required: 2}

		t.Run("an allowing default is not taken: the request expires undecided", func(t *testing.T) {
			r := file(t, s, filer, models.NewRequest{Approvers: policy, DefaultOption: "once", ExpiresIn: time.Second})
			now = now.Add(2 * time.Second)
			if _, _, err := s.Expire(ctx); err != nil {
				t.Fatal(err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusExpired || got.Decision != nil {
				t.Fatalf("%+v", got)
			}
		})
		t.Run("a denying default still applies", func(t *testing.T) {
			r := file(t, s, filer, models.NewRequest{Approvers: policy, DefaultOption: "deny", ExpiresIn: time.Second})
			now = now.Add(2 * time.Second)
			if _, _, err := s.Expire(ctx); err != nil {
				t.Fatal(err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.Status != models.StatusResolved || *got.Decision != "deny" {
				t.Fatalf("%+v", got)
			}
		})
	})
}
