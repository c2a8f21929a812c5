package views_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/views"
)

func TestCardEdited(t *testing.T) {
	t.Run("a request changed after filing says so", func(t *testing.T) {
		c := openCard()
		c.Edited = true
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if got := strings.TrimSpace(doc.Find(`[data-testid="card-edited"]`).Text()); got != "edited after filing" {
			t.Fatalf("card-edited = %q", got)
		}
	})
	t.Run("a request as filed says nothing", func(t *testing.T) {
		doc := render(t, views.CardView(openCard(), views.Ctx{Now: now}, ""))
		if n := doc.Find(`[data-testid="card-edited"]`).Length(); n != 0 {
			t.Fatalf("%d card-edited on an unedited card", n)
		}
	})
}
