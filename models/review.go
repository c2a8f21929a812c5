package models

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Review statuses: a review is asked (pending), answered (done), or ends with
// no opinion (a timeout, an error, a refusal, a malformed answer, the daily cap).
const (
	ReviewPending   = "pending"
	ReviewDone      = "done"
	ReviewNoOpinion = "no_opinion"
)

// ReviewRisks and ReviewAuthorised are the values a reviewer's answer may take.
var (
	ReviewRisks      = map[string]bool{"low": true, "medium": true, "high": true, "critical": true}
	ReviewAuthorised = map[string]bool{"unknown": true, "low": true, "medium": true, "high": true}
)

// MaxRationale caps the one sentence a reviewer gives.
const MaxRationale = 600

// Review is the advisory reviewer's reading of one version of a request:
// server-assigned, outside the action digest, and bound to the digest it read
// (Digest), so an edit voids it. It never decides, votes or counts toward a
// policy; rules may only route on it (require, escalate).
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
	// Why says, for no_opinion, what happened (timeout, error, refusal,
	// malformed, over_cap); never the provider's own words.
	Why string `json:"why,omitempty"`
}

// Current reports whether the review was made on r as it stands now.
func (v *Review) Current(r *Request) bool { return v != nil && v.Digest == r.ActionDigest() }

// ReviewRisk is the risk of r's current, answered review, or "".
func (r *Request) ReviewRisk() string {
	if r.Review == nil || r.Review.Status != ReviewDone || !r.Review.Current(r) {
		return ""
	}
	return r.Review.Risk
}

// CheckReviewAnswer validates a model's answer, and cleans its rationale to
// one line of plain text within MaxRationale bytes. Anything else is
// malformed, and the review is no_opinion.
func CheckReviewAnswer(risk, authorised, rationale string) (string, error) {
	if !ReviewRisks[risk] {
		return "", Errorf(ECodeInvalid, "risk %q is not one of low, medium, high, critical", risk)
	}
	if !ReviewAuthorised[authorised] {
		return "", Errorf(ECodeInvalid, "authorised %q is not one of unknown, low, medium, high", authorised)
	}
	if !utf8.ValidString(rationale) {
		return "", Errorf(ECodeInvalid, "rationale is not UTF-8")
	}
	rationale = strings.Join(strings.Fields(stripControls(rationale)), " ")
	if rationale == "" {
		return "", Errorf(ECodeInvalid, "rationale is empty")
	}
	if len(rationale) > MaxRationale {
		cut := MaxRationale
		for cut > 0 && !utf8.RuneStart(rationale[cut]) {
			cut--
		}
		rationale = rationale[:cut] + "…"
	}
	return rationale, nil
}

// stripControls drops control and bidirectional-override characters, which
// the page and chat must never render from a model.
func stripControls(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case r < 0x20 || (r >= 0x7f && r < 0xa0), r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return -1
		}
		return r
	}, s)
}
