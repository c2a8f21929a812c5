package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

// A login link printed before any operator token existed is a key to the
// page; once an operator token exists it must stop working (issue 15,
// finding 4), and it lives 15 minutes at most.
func TestLoginTicketEndsWhenAnOperatorExists(t *testing.T) {
	if web.LoginTicketTTL > 15*time.Minute {
		t.Fatalf("a login link lives %s, want at most 15m", web.LoginTicketTTL)
	}
	storetest.Each(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s, _ := storetest.Store(t, dialect)
		before, err := s.CreateLoginTicket(ctx, web.LoginTicketTTL)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("an agent token does not end it", func(t *testing.T) {
			if _, _, err := s.CreateToken(ctx, models.RoleAgent, "a"); err != nil {
				t.Fatal(err)
			}
			spare, _ := s.CreateLoginTicket(ctx, web.LoginTicketTTL)
			if _, _, err := s.UseLoginTicket(ctx, spare); err != nil {
				t.Fatalf("with only an agent token: %v", err)
			}
		})
		t.Run("an operator token ends every outstanding one", func(t *testing.T) {
			if _, _, err := s.CreateToken(ctx, models.RoleOperator, "alice"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.UseLoginTicket(ctx, before); models.ErrorCode(err) != models.ECodeUnauthenticated {
				t.Fatalf("the link printed before the operator token: %v, want unauthenticated", err)
			}
		})
	})
}
