package views

import (
	"strconv"
	"time"
)

// RememberedRow is one live remembered allow as the page lists it.
type RememberedRow struct {
	ID        string
	Words     string // the match in words
	Rule      string // the match as a rules file writes it
	ScopeText string // which filings it covers, in words
	CreatedBy string
	Uses      int
	ExpiresAt time.Time // zero: until revoked
}

var rememberDurations = []string{"15m", "1h", "8h", "until_revoked"}

func forWords(d string) string {
	switch d {
	case "15m":
		return "15 minutes"
	case "1h":
		return "1 hour"
	case "8h":
		return "8 hours"
	}
	return "until I revoke it"
}

// scopeWords says which later filings a scope covers, naming this card's
// filer, session and directory.
func scopeWords(scope string, c Card) string {
	switch scope {
	case "session":
		return "session " + ShortSession(c.Session) + " of " + c.CreatedBy
	case "project":
		return "project " + c.Cwd + " of " + c.CreatedBy
	}
	return "everything " + c.CreatedBy + " files (every session and project of its token)"
}

func remembersText(r Remembers) string {
	if r.Match == "" {
		return "but remembers nothing: this request cannot be remembered (it has no command Gatehouse can match, an approval policy, or no " + r.Scope + " to remember it in), so it allows this once"
	}
	where := map[string]string{"session": "in the same agent session", "project": "in the same project", "runtime": "for everything this filer files"}[r.Scope]
	return "and remembers " + r.Words + " (" + r.Rule + ") " + where + ", " + forWords(r.For)
}

func usesText(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}
