package store_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestTextRefused: the edges of each refused range, through the store, for a
// filing and an edit; nothing is written.
func TestTextRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "a1")
		kept := file(t, s, p, models.NewRequest{Title: "kept", Unsealed: true})
		for _, c := range []struct{ name, title, detail string }{
			{"NUL", "a\x00", ""}, {"unit separator", "a\x1f", ""}, {"DEL", "a\x7f", ""}, {"C1 start", "a\u0080", ""},
			{"NEL", "a\u0085", ""}, {"C1 end", "a\u009f", ""}, {"LRE", "a\u202a", ""}, {"RLO", "a\u202e", ""},
			{"LRI", "a\u2066", ""}, {"PDI", "a\u2069", ""}, {"tab in a title", "a\tb", ""}, {"newline in a title", "a\nb", ""},
			{"carriage return in a detail", "a", "x\ry"}, {"invalid UTF-8", "a\xff", ""}, {"ESC in a detail", "a", "\x1b[31m"},
		} {
			t.Run(c.name, func(t *testing.T) {
				n := models.NewRequest{Title: c.title, Detail: c.detail, Options: allowDeny()}
				_, _, err := s.CreateRequest(ctx, p, n, "")
				if models.ErrorCode(err) != models.ECodeInvalid {
					t.Fatalf("filed: %v", err)
				}
				field := "title"
				if c.detail != "" {
					field = "detail"
				}
				if !strings.HasPrefix(err.(*models.Error).Detail, field) {
					t.Fatalf("%v does not name %s", err, field)
				}
				_, err = s.PatchRequest(ctx, kept.ID, p, store.Patch{Title: &n.Title, Detail: &n.Detail})
				if models.ErrorCode(err) != models.ECodeInvalid {
					t.Fatalf("edited: %v", err)
				}
			})
		}
		t.Run("what stays allowed", func(t *testing.T) {
			r := file(t, s, p, models.NewRequest{Title: "Déploy ✓ «prod» \u200d", Summary: "a\n\tb", Detail: "x\n\ty", Tool: "Bash", Command: "git status\n\tgit diff"})
			if r.Title != "Déploy ✓ «prod» \u200d" {
				t.Fatalf("%q", r.Title)
			}
		})
		got, err := s.GetRequest(ctx, kept.ID)
		if err != nil || got.Version != 1 || got.Title != "kept" {
			t.Fatalf("the kept request changed: %+v %v", got, err)
		}
	})
}
