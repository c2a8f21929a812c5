package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// BenchmarkDecideSuggesting measures an operator's allow on SQLite: of a
// request with no cwd (nothing to count, the decision as before), and of a
// shell command in a project (the family parsed, the rules asked, the tally
// row upserted and the decision named in the decision's own commit).
func BenchmarkDecideSuggesting(b *testing.B) {
	for _, c := range []struct{ name, cwd string }{{"not-counted", ""}, {"counted", "/w"}} {
		b.Run(c.name, func(b *testing.B) {
			s, _ := storetest.Store(b, "sqlite")
			tok, _, err := s.CreateToken(ctx, models.RoleAgent, "bench")
			if err != nil {
				b.Fatal(err)
			}
			optok, _, err := s.CreateToken(ctx, models.RoleOperator, "op")
			if err != nil {
				b.Fatal(err)
			}
			p, op := tok.Principal(), optok.Principal()
			n := shellFiling("npm test", "s1", c.cwd)
			n.Options = allowDeny()
			if c.cwd == "" {
				delete(n.SourceRef, "cwd")
			}
			ids := make([]string, b.N)
			for i := range ids {
				r, _, err := s.CreateRequest(ctx, p, n, "")
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = r.ID
			}
			b.ResetTimer()
			for _, id := range ids {
				if _, err := s.Decide(ctx, id, models.Decision{Version: 1, Option: "once", By: op.Label(), Via: models.ViaAPI, Voter: &op}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
