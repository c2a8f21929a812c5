package api

import "time"

// RememberOffer is what choosing an option also remembers, declared by its
// filer (an ACP agent's allow_always, Claude Code's "always allow"): the scope
// and how long. The match is never the filer's: the server derives it from
// the request's command, and the card shows it before the click.
type RememberOffer struct {
	Scope string `json:"scope"`
	For   string `json:"for"`
}

// Remember is the decide body's "remember": keep this allow for later filings
// in Scope (session, project or runtime) For a time (15m, 1h, 8h,
// until_revoked). Match is the command pattern to remember, as a rules file
// writes one; absent, the exact command the request runs.
type Remember struct {
	Scope string `json:"scope"`
	For   string `json:"for"`
	Match string `json:"match,omitempty"`
}

// Remembered is one remembered allow as GET /v1/remembered shows it.
type Remembered struct {
	ID    string `json:"id"`
	Scope string `json:"scope"` // session, project or runtime
	For   string `json:"for"`   // 15m, 1h, 8h or until_revoked
	Tool  string `json:"tool"`
	Match string `json:"match"` // the command pattern, as a rules file writes it
	Words string `json:"words"` // the same, in words
	// Filer is the token the grant applies to (created_by of its filings);
	// Session and Cwd narrow it for the session and project scopes.
	Filer     string     `json:"filer"`
	Session   string     `json:"session,omitempty"`
	Cwd       string     `json:"cwd,omitempty"`
	Request   string     `json:"request_id"` // the decision that made it
	Option    string     `json:"option"`     // the option chosen when it was made; later filings get their first plain allow
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"` // null: until revoked
	Uses      int        `json:"uses"`
	LastUsed  *time.Time `json:"last_used_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	RevokedBy *string    `json:"revoked_by"`
	Live      bool       `json:"live"` // neither expired nor revoked, by the server's clock
}

// RememberedList is the answer of GET /v1/remembered: live grants first, newest first.
type RememberedList struct {
	Remembered []Remembered `json:"remembered"`
}

// Decided is the answer of a decide: the record, plus the remembered allow
// the decision stored, when it stored one.
type Decided struct {
	Request
	Remembered *Remembered `json:"remembered,omitempty"`
}
