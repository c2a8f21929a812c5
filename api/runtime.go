package api

import "time"

// RuntimeRegistration is the body of POST /v1/runtimes; the same name again
// updates the caller's runtime. Without CallbackURL the runtime pulls its
// decisions from the feed.
type RuntimeRegistration struct {
	Name        string `json:"name"`
	Machine     string `json:"machine"`
	CallbackURL string `json:"callback_url,omitempty"`
}

// Forwarding is a runtime's forwarding health.
type Forwarding struct {
	LastResult          string     `json:"last_result"`
	LastResultAt        *time.Time `json:"last_result_at"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	Pending             int64      `json:"pending"`
}

// Runtime is a registered runtime as the API shows it.
type Runtime struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Machine     string     `json:"machine"`
	CallbackURL string     `json:"callback_url"`
	CreatedAt   time.Time  `json:"created_at"`
	LastSeenAt  time.Time  `json:"last_seen_at"`
	Forwarding  Forwarding `json:"forwarding"`
}

// Runtimes is the answer of GET /v1/runtimes.
type Runtimes struct {
	Runtimes []Runtime `json:"runtimes"`
}

// Decision is one decision forwarded to a runtime: the body of the signed
// POST {callback_url}/v1/permissions/decide, and one entry of the pull feed
// (which adds DecidedAt and Cursor). (RequestID, Version) identifies it: a
// runtime applies each at most once.
type Decision struct {
	RequestID string  `json:"requestId"`
	Version   int     `json:"version"`
	Decision  *string `json:"decision"`
	Answer    *string `json:"answer"`
	Note      *string `json:"note"`
	// DecidedDigest is the action_digest of the version decided on: a runtime
	// acts only when it equals what it filed. DecidedVia tells a person's
	// decision ("api", "page") from a rule's or an expiry default.
	DecidedDigest string     `json:"decided_digest"`
	DecidedVia    string     `json:"decided_via"`
	DecidedAt     *time.Time `json:"decided_at,omitempty"` // pull feed only
	Cursor        string     `json:"cursor,omitempty"`     // pull feed only: resume after this one
}

// DecisionPage is one answer of GET /v1/runtimes/{id}/decisions. Cursor is
// what to pass as ?after= next (it acknowledges everything up to it).
type DecisionPage struct {
	Decisions []Decision `json:"decisions"`
	Cursor    string     `json:"cursor"`
}

// Key is one public key the server signs forwards with.
type Key struct {
	KeyID     string `json:"key_id"`
	Algorithm string `json:"algorithm"`  // ed25519
	PublicKey string `json:"public_key"` // standard base64 of the 32-byte Ed25519 key
}

// Keys is the answer of GET /v1/keys.
type Keys struct {
	Keys []Key `json:"keys"`
}
