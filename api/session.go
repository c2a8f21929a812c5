package api

import "time"

// Session is a page session as the API shows it: never its cookie secret or
// the secret's hash. Operator is the name of the token that logged in
// ("login-link" for the one-time link).
type Session struct {
	ID         string    `json:"id"`
	Operator   string    `json:"operator"`
	CreatedAt  time.Time `json:"created_at"`
	LastSeenAt time.Time `json:"last_seen_at"`
	UserAgent  string    `json:"user_agent"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// Sessions is the answer of GET /v1/sessions.
type Sessions struct {
	Sessions []Session `json:"sessions"`
}
