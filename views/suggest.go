package views

import "strconv"

// SuggestionRow is one proposed remembered allow as the inbox shows it.
type SuggestionRow struct {
	ID        string
	Words     string // the match in words
	Rule      string // the match as a rules file writes it
	ScopeText string // which filings it would cover, in words
	Decisions int    // the allows it would have saved
	For       string // the duration offered first
}

func decisionsText(n int) string {
	if n == 1 {
		return "1 time"
	}
	return strconv.Itoa(n) + " times"
}
