package store_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func TestNamedTokens(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)

		t.Run("an operator carries its groups to its principal and its sessions", func(t *testing.T) {
			tok, secret, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleOperator, Name: "alice", Groups: []string{"sre", "release"}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Authenticate(ctx, secret)
			if err != nil || !slices.Equal(got.Principal().Groups, []string{"sre", "release"}) || got.ID != tok.ID {
				t.Fatalf("authenticate: %+v %v", got, err)
			}
			sess, _, err := s.LoginWithToken(ctx, secret)
			if err != nil || sess.Principal().Name != "alice" || !slices.Equal(sess.Principal().Groups, []string{"sre", "release"}) {
				t.Fatalf("session: %+v %v", sess, err)
			}
		})

		t.Run("a second live token with the same role and name is refused", func(t *testing.T) {
			_, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleOperator, Name: "alice"})
			if models.ErrorCode(err) != models.ECodeConflict {
				t.Fatalf("second alice: %v, want %s", err, models.ECodeConflict)
			}
			if _, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleAgent, Name: "alice"}); err != nil {
				t.Fatalf("an agent named alice is another role: %v", err)
			}
		})

		t.Run("for names an operator who exists", func(t *testing.T) {
			_, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleAgent, Name: "typo-bot", For: "alcie"})
			if models.ErrorCode(err) != models.ECodeInvalid || !strings.Contains(err.Error(), `"alcie" names no operator`) {
				t.Fatalf("for a name no operator has: %v, want %s naming it", err, models.ECodeInvalid)
			}
			ts, err := s.ListTokens(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, tok := range ts {
				if tok.Name == "typo-bot" {
					t.Fatalf("the refused token was stored: %+v", tok)
				}
			}
		})

		t.Run("after a revoke the name is free again", func(t *testing.T) {
			if _, err := s.RevokeToken(ctx, "bob"); models.ErrorCode(err) != models.ECodeNotFound {
				t.Fatalf("revoke an absent bob: %v", err)
			}
			if _, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleRuntime, Name: "ci", For: "alice"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RevokeToken(ctx, "ci"); err != nil {
				t.Fatal(err)
			}
			tok, secret, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleRuntime, Name: "ci", For: "alice"})
			if err != nil || tok.For != "alice" {
				t.Fatalf("recreate ci: %+v %v", tok, err)
			}
			got, _ := s.Authenticate(ctx, secret)
			if got.Principal().For != "alice" {
				t.Fatalf("for is lost: %+v", got)
			}
		})

		t.Run("bad groups and for are refused", func(t *testing.T) {
			for name, n := range map[string]store.NewToken{
				"groups on an agent":   {Role: models.RoleAgent, Name: "g", Groups: []string{"sre"}},
				"for on an operator":   {Role: models.RoleOperator, Name: "f", For: "alice"},
				"a group with a space": {Role: models.RoleOperator, Name: "s", Groups: []string{"a b"}},
				"an empty for name":    {Role: models.RoleAgent, Name: "e", For: " "},
			} {
				if _, _, err := s.CreateNamedToken(ctx, n); models.ErrorCode(err) != models.ECodeInvalid {
					t.Errorf("%s: %v, want %s", name, err, models.ECodeInvalid)
				}
			}
		})

		t.Run("the first login link speaks as the first operator", func(t *testing.T) {
			// A store with no operator yet: links die once one exists.
			s, _ := storetest.Store(t, dialect)
			secret, err := s.CreateLoginTicket(ctx, 60e9)
			if err != nil {
				t.Fatal(err)
			}
			sess, _, err := s.UseLoginTicket(ctx, secret)
			if err != nil || sess.Principal().Label() != "operator:"+store.FirstOperator {
				t.Fatalf("login link session: %+v %v", sess, err)
			}
		})
	})
}
