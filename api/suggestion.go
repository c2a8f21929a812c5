package api

import "time"

// Suggestion is a remembered allow the server proposes because the operators
// kept allowing the same command family in one project: the grant accepting
// it makes, and the decisions it would have saved.
type Suggestion struct {
	ID        string              `json:"id"`
	State     string              `json:"state"` // open, accepted or dismissed
	Grant     SuggestedGrant      `json:"grant"`
	Decisions SuggestionDecisions `json:"decisions"`
	CreatedAt time.Time           `json:"created_at"` // the first decision it counts
	UpdatedAt time.Time           `json:"updated_at"` // the last change: a decision counted, accepted or dismissed
	DecidedBy *string             `json:"decided_by"` // who accepted or dismissed it
	DecidedAt *time.Time          `json:"decided_at"`
	GrantID   *string             `json:"grant_id"` // the remembered allow accepting it made
}

// SuggestedGrant is the remembered allow a suggestion makes when accepted:
// always the project scope (the filer's token and its cwd).
type SuggestedGrant struct {
	Scope string `json:"scope"`
	For   string `json:"for"`
	Tool  string `json:"tool"`
	Match string `json:"match"` // the command pattern
	Words string `json:"words"` // the same, in words
	Rule  string `json:"rule"`  // the same, as a rules file writes a match
	Filer string `json:"filer"`
	Cwd   string `json:"cwd"`
}

// SuggestionDecisions are the operators' allows a suggestion counts.
type SuggestionDecisions struct {
	Count int      `json:"count"`
	IDs   []string `json:"ids"` // the requests decided, newest first; at most the first 100 counted
}

// SuggestionList is the answer of GET /v1/suggestions: what is proposed now,
// most decisions first.
type SuggestionList struct {
	Suggestions []Suggestion `json:"suggestions"`
}

// AcceptSuggestion is the optional body of POST /v1/suggestions/{id}/accept:
// how long the grant lasts (15m, 1h, 8h, until_revoked; absent: the
// suggestion's own).
type AcceptSuggestion struct {
	For string `json:"for,omitempty"`
}

// SuggestionAccepted is the answer of an accept: the suggestion and the grant
// it made.
type SuggestionAccepted struct {
	Suggestion Suggestion `json:"suggestion"`
	Remembered Remembered `json:"remembered"`
}
