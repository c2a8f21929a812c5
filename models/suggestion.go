package models

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// States of a suggestion. An open one is proposed once it counts enough
// allows; a tainted one never is (a denial, an approval policy, a rule or a
// high review touched its family in its project); accepted and dismissed are
// the operator's answers, kept so the same suggestion never comes back.
const (
	SuggestionOpen      = "open"
	SuggestionTainted   = "tainted"
	SuggestionAccepted  = "accepted"
	SuggestionDismissed = "dismissed"
)

// DefaultSuggestAfter is how many operator allows of one family in one
// project make a suggestion, unless serve is told otherwise.
const DefaultSuggestAfter = 3

// SuggestFor is how long an accepted suggestion's grant lasts unless the
// operator chooses otherwise.
const SuggestFor = "8h"

// MaxSuggestionIDs bounds the decisions a suggestion names (it counts all).
const MaxSuggestionIDs = 100

// Suggestion is the tally, kept on each decision, of the operators' allows
// of one command family filed by one token in one project (cwd): the
// remembered allow that would have saved those clicks.
type Suggestion struct {
	ID          string `gorm:"primaryKey;size:40"` // SuggestionID of its key
	OwnerID     string `gorm:"size:40;not null"`
	Filer       string `gorm:"size:200;not null"`
	Cwd         string `gorm:"not null"`
	Tool        string `gorm:"size:128;not null"`
	Family      string `gorm:"not null"` // rules.SuggestFamily's match
	FamilyWords string `gorm:"not null"`
	// Exact is the first allow's exact command; Varied is set once another
	// command of the family is allowed. The grant is the exact command until
	// then, so three allows of one command never propose its whole family.
	Exact      string     `gorm:"not null"`
	ExactWords string     `gorm:"not null"`
	Varied     bool       `gorm:"not null;default:false"`
	Allows     int        `gorm:"not null;default:0;index:idx_suggestions_state_allows,priority:2"`
	State      string     `gorm:"size:16;not null;index:idx_suggestions_state_allows,priority:1"`
	Reason     string     `gorm:"size:300;not null;default:''"` // why it is tainted
	GrantID    *string    `gorm:"size:40"`
	DecidedBy  *string    `gorm:"size:200"`
	DecidedAt  *time.Time //
	CreatedAt  time.Time  `gorm:"not null"`
	UpdatedAt  time.Time  `gorm:"not null"`
	// Read, never stored: the requests it counts, newest first, and the
	// option the newest was allowed with (what its grant records).
	IDs    []string `gorm:"-"`
	Option string   `gorm:"-"`
}

// SuggestionDecision is one allow a suggestion counts.
type SuggestionDecision struct {
	SuggestionID string    `gorm:"primaryKey;size:40"`
	RequestID    string    `gorm:"primaryKey;size:40"`
	CreatedAt    time.Time `gorm:"not null"`
}

// SuggestionID names the suggestion of a family in one token's project: the
// same allows always count toward the same row.
func SuggestionID(owner, cwd, tool, family string) string {
	h := sha256.New()
	for _, s := range []string{owner, cwd, tool, family} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "sug_" + hex.EncodeToString(h.Sum(nil))[:32]
}

// Grant is the match the suggestion's grant keeps, and the same in words:
// the exact command while every allow was of it, else the family.
func (g *Suggestion) Grant() (match, words string) {
	if g.Varied {
		return g.Family, g.FamilyWords
	}
	return g.Exact, g.ExactWords
}

// API is the suggestion as GET /v1/suggestions shows it; rule is its match
// as a rules file writes one.
func (g *Suggestion) API(rule string) api.Suggestion {
	match, words := g.Grant()
	ids := g.IDs
	if ids == nil {
		ids = []string{}
	}
	return api.Suggestion{
		ID: g.ID, State: g.State,
		Grant: api.SuggestedGrant{Scope: ScopeProject, For: SuggestFor, Tool: g.Tool, Match: match, Words: words, Rule: rule,
			Filer: g.Filer, Cwd: g.Cwd},
		Decisions: api.SuggestionDecisions{Count: g.Allows, IDs: ids},
		CreatedAt: g.CreatedAt.UTC(), UpdatedAt: g.UpdatedAt.UTC(), DecidedBy: g.DecidedBy, DecidedAt: utcOrNil(g.DecidedAt),
		GrantID: g.GrantID,
	}
}

// ReviewedHigh reports whether the advisory reviewer judged r high or
// critical: a suggestion never covers a family such a request belongs to.
// Any such review counts, even one an edit has voided since: the advice was
// given on this family.
func ReviewedHigh(r *Request) bool {
	if r == nil || r.Review == nil || r.Review.Status != ReviewDone {
		return false
	}
	return r.Review.Risk == "high" || r.Review.Risk == "critical"
}
