package api

import "time"

// Review is the advisory reviewer's reading of a request: how risky the
// action looks, whether the session's user prompts asked for it, and why, in
// one sentence. It is server-assigned and outside the action digest; Digest
// is the action digest it read, so a review whose digest differs from the
// record's was made on an earlier version and is void. It never decides.
type Review struct {
	Status     string    `json:"status"`
	Risk       string    `json:"risk,omitempty"`
	Authorised string    `json:"authorised,omitempty"`
	Rationale  string    `json:"rationale,omitempty"`
	Model      string    `json:"model"`
	Digest     string    `json:"digest"`
	TokensIn   int64     `json:"tokens_in"`
	TokensOut  int64     `json:"tokens_out"`
	At         time.Time `json:"at"`
	// Why says what became of a no_opinion review: timeout, error, refusal,
	// malformed or over_cap.
	Why string `json:"why,omitempty"`
}
