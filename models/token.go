package models

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

// Roles.
const (
	RoleOperator = "operator"
	RoleRuntime  = "runtime"
	RoleAgent    = "agent"
)

// ValidRole reports whether role is one a token may have.
func ValidRole(role string) bool {
	return role == RoleOperator || role == RoleRuntime || role == RoleAgent
}

// Principal is who is calling: the token (or session) behind a request.
type Principal struct {
	ID     string // the token id; owner of what it files
	Role   string
	Name   string
	Groups []string // an operator's groups, for approval policies
	For    string   // the person an agent or runtime token acts for ("" when none)
}

// sessionPrincipal starts the id of a page session opened by no token (a
// login link's).
const sessionPrincipal = "session:"

// TokenID is the id of the token p speaks with ("" for a login link's
// session, which has none).
func (p Principal) TokenID() string {
	if strings.HasPrefix(p.ID, sessionPrincipal) {
		return ""
	}
	return p.ID
}

// Label is how the principal appears in records: "agent:name".
func (p Principal) Label() string { return p.Role + ":" + p.Name }

// Token is a stored bearer token: only its hash is kept.
type Token struct {
	ID        string   `gorm:"primaryKey;size:40"`
	Name      string   `gorm:"size:100;not null"`
	Role      string   `gorm:"size:16;not null"`
	Hash      string   `gorm:"size:64;not null;uniqueIndex"`
	Groups    []string `gorm:"serializer:json"` // operators only: what approval policies match
	For       string   `gorm:"size:100"`        // agents and runtimes: the operator they act for
	CreatedAt time.Time
	LastUsed  *time.Time
	RevokedAt *time.Time
}

// Principal is the caller a token authenticates.
func (t *Token) Principal() Principal {
	return Principal{ID: t.ID, Role: t.Role, Name: t.Name, Groups: t.Groups, For: t.For}
}

// HashSecret is how every secret (token, session, login ticket) is stored.
// The secrets are 256 random bits, so a plain SHA-256 is enough.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// NewSecret returns a random secret with a readable prefix.
func NewSecret(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// NewID returns a short random id with a prefix, e.g. "req_…".
func NewID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Session is a browser login; the cookie carries the secret, the table its hash.
// ID names it in lists and revocations; it is not the secret.
type Session struct {
	Hash       string   `gorm:"primaryKey;size:64"`
	ID         string   `gorm:"size:40;index"`
	TokenID    string   `gorm:"size:40"`
	Name       string   `gorm:"size:100;not null"`
	Groups     []string `gorm:"serializer:json"` // the token's groups when it was opened (tokens never change)
	CSRF       string   `gorm:"size:64;not null"`
	UserAgent  string   `gorm:"size:200"`
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time `gorm:"index"`
}

// LoginTicket is a one-time login link.
type LoginTicket struct {
	Hash      string `gorm:"primaryKey;size:64"`
	Name      string `gorm:"size:100"` // the operator the session it opens speaks as
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// NamePattern is what a group or an operator's name may look like, so policies
// and labels stay readable and unambiguous.
var NamePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$`)

// Principal is the operator a session speaks for.
func (sess *Session) Principal() Principal {
	id := sess.TokenID
	if id == "" {
		id = sessionPrincipal + sess.Hash[:12]
	}
	return Principal{ID: id, Role: RoleOperator, Name: sess.Name, Groups: sess.Groups}
}
