package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// BenchmarkFileEscalating: what an escalation costs a filing (the check
// whether every eligible approver is away reads the operators and their
// availability) beside the same policy without one, on SQLite.
func BenchmarkFileEscalating(b *testing.B) {
	for _, c := range []struct {
		name   string
		policy func() *models.Approvers
	}{
		{"policy", func() *models.Approvers { return &models.Approvers{Groups: []string{"release"}, Required: 1} }},
		{"policy+escalate", onCall},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, _ := storetest.Store(b, "sqlite")
			for _, n := range []string{"alice", "dave"} {
				if _, _, err := s.CreateNamedToken(ctx, store.NewToken{Role: models.RoleOperator, Name: n, Groups: []string{"release"}}); err != nil {
					b.Fatal(err)
				}
			}
			tok, _, err := s.CreateToken(ctx, models.RoleAgent, "a")
			if err != nil {
				b.Fatal(err)
			}
			p := tok.Principal()
			for b.Loop() {
				if _, _, err := s.CreateRequest(ctx, p, models.NewRequest{Title: "deploy", Options: allowDeny(), Approvers: c.policy()}, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
