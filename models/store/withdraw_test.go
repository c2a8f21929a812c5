package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func TestWithdraw(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		owner := agent(t, s, "a")
		op := models.Principal{ID: "op", Role: models.RoleOperator, Name: "o"}

		t.Run("dismissing a request someone waits on is refused and changes nothing", func(t *testing.T) {
			for _, kind := range []string{models.KindApproval, models.KindQuestion, models.KindPermission, models.KindFailure, models.KindSetup} {
				r := file(t, s, owner, models.NewRequest{Kind: kind})
				_, err := s.Withdraw(ctx, r.ID, op, models.StatusDismissed)
				if models.ErrorCode(err) != models.ECodeNotDismissable {
					t.Fatalf("dismiss %s: %v, want %s", kind, err, models.ECodeNotDismissable)
				}
				got, err := s.GetRequest(ctx, r.ID)
				if err != nil || got.Status != models.StatusOpen || got.Version != 1 {
					t.Fatalf("after a refused dismiss of %s: %+v %v", kind, got, err)
				}
				trail, _ := s.AuditTrail(ctx, r.ID)
				if len(trail) != 1 {
					t.Fatalf("%d audit rows after a refused dismiss, want only the create", len(trail))
				}
			}
		})

		t.Run("a plain question that gates nothing is dismissed", func(t *testing.T) {
			r := file(t, s, owner, models.NewRequest{Kind: models.KindQuestion, AllowAnswer: true, Options: []models.Option{}})
			got, err := s.Withdraw(ctx, r.ID, op, models.StatusDismissed)
			if err != nil || got.Status != models.StatusDismissed {
				t.Fatalf("dismiss a consult question: %+v %v", got, err)
			}
		})

		t.Run("waiting and review items are dismissed", func(t *testing.T) {
			for _, kind := range []string{models.KindWaiting, models.KindReview} {
				r := file(t, s, owner, models.NewRequest{Kind: kind, Options: []models.Option{}})
				got, err := s.Withdraw(ctx, r.ID, op, models.StatusDismissed)
				if err != nil || got.Status != models.StatusDismissed {
					t.Fatalf("dismiss %s: %+v %v", kind, got, err)
				}
			}
		})

		t.Run("the owner cancels any kind", func(t *testing.T) {
			r := file(t, s, owner, models.NewRequest{Kind: models.KindApproval})
			got, err := s.Withdraw(ctx, r.ID, owner, models.StatusCancelled)
			if err != nil || got.Status != models.StatusCancelled {
				t.Fatalf("cancel: %+v %v", got, err)
			}
		})
	})
}
