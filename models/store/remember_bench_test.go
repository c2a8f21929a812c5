package store_test

import (
	"fmt"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// BenchmarkFileRemembered measures one filing of a shell command on SQLite:
// with no grant for its token (the read finds nothing), with 20 grants none
// of which covers it (each is read, compiled and matched), and approved by a
// grant (the read, the match and the conditional use in the filing's commit).
func BenchmarkFileRemembered(b *testing.B) {
	for _, c := range []struct {
		name   string
		grants []string // commands remembered for the token first
		cmd    string
	}{
		{"no-grant", nil, "npm test"},
		{"20-grants-none-cover", twenty(), "npm test"},
		{"approved-by-grant", []string{"npm test"}, "npm test"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, _ := storetest.Store(b, "sqlite")
			tok, _, err := s.CreateToken(ctx, models.RoleAgent, "bench")
			if err != nil {
				b.Fatal(err)
			}
			p := tok.Principal()
			n := func(cmd string) models.NewRequest {
				r := shellFiling(cmd, "s1", "/w")
				r.Options = allowDeny()
				return r
			}
			for _, g := range c.grants {
				r, _, err := s.CreateRequest(ctx, p, n(g), "")
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.DecideRemembering(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"},
					&store.RememberSpec{Scope: "session", For: "until_revoked"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, _, err := s.CreateRequest(ctx, p, n(c.cmd), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func twenty() []string {
	var out []string
	for _, w := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"} {
		out = append(out, "make "+w)
	}
	return out
}

// BenchmarkDecideRemembering measures a decision that stores a remembered
// allow for a shell command (the page's "Allow for this session"): the
// command's remember choices, the grant and both audit entries, on SQLite.
func BenchmarkDecideRemembering(b *testing.B) {
	s, _ := storetest.Store(b, "sqlite")
	tok, _, err := s.CreateToken(ctx, models.RoleAgent, "bench")
	if err != nil {
		b.Fatal(err)
	}
	p := tok.Principal()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++ // a session of its own each time: the last grant would decide the filing
		n := shellFiling("go test ./... && go vet ./...", fmt.Sprint("s", i), "/w")
		n.Options = allowDeny()
		r, _, err := s.CreateRequest(ctx, p, n, "")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, _, err := s.DecideRemembering(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"},
			&store.RememberSpec{Scope: "session", For: "until_revoked"}); err != nil {
			b.Fatal(err)
		}
	}
}
