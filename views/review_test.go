package views_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/views"
)

// TestCardReview: the reviewer's chip and sentence sit above the buttons,
// as advice, and are no control; a card without a review shows none, and
// sorting by review puts critical first.
func TestCardReview(t *testing.T) {
	c := openCard()
	c.Review = &views.CardReview{Status: "done", Risk: "critical", Authorised: "low", Rationale: "It pipes a download into a shell.", Model: "openai:m"}
	doc := render(t, views.CardView(c, views.Ctx{CSRF: "x", Now: now}, ""))
	html, _ := doc.Html()
	chip, form := strings.Index(html, `data-testid="card-review-risk"`), strings.Index(html, `data-testid="decide-form"`)
	if chip < 0 || form < 0 || chip > form {
		t.Fatalf("the review chip is not above the buttons (chip at %d, form at %d)", chip, form)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="card-review-risk"]`).Text()); got != "reviewer: critical" {
		t.Fatalf("chip %q", got)
	}
	if got := doc.Find(`[data-testid="card-review-rationale"]`).Text(); got != c.Review.Rationale {
		t.Fatalf("rationale %q", got)
	}
	if doc.Find(`[data-testid="card-review"] button, [data-testid="card-review"] form`).Length() != 0 {
		t.Fatal("the review holds a control")
	}
	plain := render(t, views.CardView(openCard(), views.Ctx{CSRF: "x", Now: now}, ""))
	if plain.Find(`[data-testid="card-review"]`).Length() != 0 {
		t.Fatal("a card without a review shows one")
	}
	low, none := openCard(), openCard()
	low.ID, none.ID = "req_low", "req_none"
	low.Review = &views.CardReview{Status: "done", Risk: "low"}
	cards := []views.Card{none, low, c}
	views.SortByReview(cards)
	if cards[0].ID != c.ID || cards[1].ID != "req_low" || cards[2].ID != "req_none" {
		t.Fatalf("sorted %s %s %s", cards[0].ID, cards[1].ID, cards[2].ID)
	}
}
