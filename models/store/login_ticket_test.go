package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
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
			sess, _, err := s.UseLoginTicket(ctx, spare)
			if err != nil {
				t.Fatalf("with only an agent token: %v", err)
			}
			// The login is in the audit chain, as a link's: no token.
			var opened []store.Audit
			for _, a := range allEntries(t, s) {
				if a.Action == store.ActionSessionOpen && strings.Contains(a.Detail, sess.ID) {
					opened = append(opened, a)
				}
			}
			if len(opened) != 1 || opened[0].Actor != sess.Principal().Label() || strings.Contains(opened[0].Detail, "token_id") || strings.Contains(opened[0].Detail, spare) {
				t.Fatalf("session_open entries %+v", opened)
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
