package views

import "slices"

// authorisedWords says how clearly the user's prompts asked for the action.
func authorisedWords(a string) string {
	switch a {
	case "high":
		return "The user asked for this."
	case "medium":
		return "The user's prompts point to this."
	case "low":
		return "The user's prompts barely cover this."
	}
	return "No user prompt says whether this was asked for."
}

// reviewRank orders the reviewer's risk, critical first; a card without an
// answered review comes after every answered one.
func reviewRank(c Card) int {
	if c.Review == nil || c.Review.Status != "done" {
		return 4
	}
	return map[string]int{"critical": 0, "high": 1, "medium": 2, "low": 3}[c.Review.Risk]
}

// SortByReview orders cards by the reviewer's risk, critical first, keeping
// newest first within a level: the inbox's sort on demand.
func SortByReview(cards []Card) {
	slices.SortStableFunc(cards, func(a, b Card) int { return reviewRank(a) - reviewRank(b) })
}
