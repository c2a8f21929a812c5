package api

import "time"

// NewToken is the body of POST /v1/tokens: a token for a role and a name.
// Groups are an operator's; For names the operator an agent or runtime token
// acts for, who may never approve its requests.
type NewToken struct {
	Role   string   `json:"role"`
	Name   string   `json:"name"`
	Groups []string `json:"groups,omitempty"`
	For    string   `json:"for,omitempty"`
}

// Token is a token as the API lists it: never its secret or the secret's hash.
type Token struct {
	ID        string     `json:"id"`
	Role      string     `json:"role"`
	Name      string     `json:"name"`
	Groups    []string   `json:"groups"`
	For       string     `json:"for"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// CreatedToken is the answer of POST /v1/tokens: the token and, this once,
// its secret, which the server does not keep and cannot show again.
type CreatedToken struct {
	Token
	Secret string `json:"token"`
}

// Tokens is the answer of GET /v1/tokens: every token, revoked ones included,
// oldest first.
type Tokens struct {
	Tokens []Token `json:"tokens"`
}

// RevokedTokens is the answer of DELETE /v1/tokens/{id-or-name}: how many live
// tokens it revoked (their page sessions end too).
type RevokedTokens struct {
	Revoked int64 `json:"revoked"`
}
