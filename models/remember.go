package models

import (
	"strconv"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// ViaRemembered is the decided_via of a filing a remembered allow decided.
const ViaRemembered = "remembered"

// Scopes of a remembered allow: the filing token's session (its source_ref
// session), its project (its source_ref cwd), or the whole token (runtime).
// None crosses tokens.
const (
	ScopeSession = "session"
	ScopeProject = "project"
	ScopeRuntime = "runtime"
)

// UntilRevoked is the duration of a remembered allow that ends only when an
// operator revokes it.
const UntilRevoked = "until_revoked"

// RememberFor is every duration a remembered allow may have; 0 is until revoked.
var RememberFor = map[string]time.Duration{"15m": 15 * time.Minute, "1h": time.Hour, "8h": 8 * time.Hour, UntilRevoked: 0}

// RememberForOrder lists the durations shortest first, for forms and messages.
var RememberForOrder = []string{"15m", "1h", "8h", UntilRevoked}

// MaxMatch bounds a remembered allow's command pattern.
const MaxMatch = 1000

// Remembered is a stored remembered allow: an operator's allow kept for later
// filings of the same token (narrowed to a session or a project) whose tool is
// the same and whose command matches, until it expires or is revoked.
type Remembered struct {
	ID    string `gorm:"primaryKey;size:40"`
	Scope string `gorm:"size:16;not null"`
	For   string `gorm:"size:16;not null"`
	Tool  string `gorm:"size:128;not null"`
	Match string `gorm:"not null"` // an anchored regular expression over each simple command
	Words string `gorm:"not null"` // Match in words, as the card showed it
	// OwnerID is the filing token it applies to; Filer that token's label.
	OwnerID    string    `gorm:"size:40;not null;index"`
	Filer      string    `gorm:"size:200;not null"`
	Session    string    // source_ref session, for ScopeSession
	Cwd        string    // source_ref cwd, for ScopeProject
	RequestID  string    `gorm:"size:40;not null"`
	Option     string    `gorm:"size:64;not null"`
	CreatedBy  string    `gorm:"size:200;not null"`
	CreatedAt  time.Time `gorm:"not null"`
	ExpiresAt  *time.Time
	Uses       int `gorm:"not null;default:0"`
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	RevokedBy  *string `gorm:"size:200"`
	// MakerToken is the operator token whose decision made the grant: the
	// grant lives no longer than it. "" when no token made it (a login link's
	// session) and on rows older than the column.
	MakerToken string `gorm:"size:40;not null;default:'';index"`
	// MakerRevoked is read, never stored: the token that made the grant has
	// been revoked since, so the grant no longer applies.
	MakerRevoked bool `gorm:"->;-:migration"`
}

// TableName keeps the table's name singular, as the page says it.
func (Remembered) TableName() string { return "remembered" }

// Live reports whether the grant still applies at now.
func (g *Remembered) Live(now time.Time) bool {
	return g.RevokedAt == nil && !g.MakerRevoked && (g.ExpiresAt == nil || now.Before(*g.ExpiresAt))
}

// Covers reports whether r is within the grant's scope: the same filing
// token, the same tool, and for the narrower scopes the same session or
// working directory. Whether its command matches is the rules' to say.
func (g *Remembered) Covers(r *Request) bool {
	if r.OwnerID != g.OwnerID || r.Tool != g.Tool {
		return false
	}
	switch g.Scope {
	case ScopeSession:
		return g.Session != "" && r.SourceRef["session"] == g.Session
	case ScopeProject:
		return g.Cwd != "" && r.SourceRef["cwd"] == g.Cwd
	case ScopeRuntime:
		return true
	}
	return false
}

// API is the grant as GET /v1/remembered shows it.
func (g *Remembered) API(now time.Time) api.Remembered {
	return api.Remembered{
		ID: g.ID, Scope: g.Scope, For: g.For, Tool: g.Tool, Match: g.Match, Words: g.Words,
		Filer: g.Filer, Session: g.Session, Cwd: g.Cwd, Request: g.RequestID, Option: g.Option,
		CreatedBy: g.CreatedBy, CreatedAt: g.CreatedAt.UTC(), ExpiresAt: utcOrNil(g.ExpiresAt), Uses: g.Uses,
		LastUsed: utcOrNil(g.LastUsedAt), RevokedAt: utcOrNil(g.RevokedAt), RevokedBy: g.RevokedBy, Live: g.Live(now),
	}
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ValidateRemember checks a scope and a duration.
func ValidateRemember(field, scope, dur string) error {
	switch scope {
	case ScopeSession, ScopeProject, ScopeRuntime:
	default:
		return Errorf(ECodeInvalid, "%s.scope %q must be session, project or runtime", field, scope)
	}
	if _, ok := RememberFor[dur]; !ok {
		return Errorf(ECodeInvalid, "%s.for %q must be 15m, 1h, 8h or until_revoked", field, dur)
	}
	return nil
}

// RememberFits says whether a request with source_ref ref can be remembered
// in scope: a session scope needs its session, a project scope its cwd.
func RememberFits(scope string, ref map[string]string) error {
	switch {
	case scope == ScopeSession && ref["session"] == "":
		return Errorf(ECodeInvalid, "scope session needs the request's source_ref session, and this request names none")
	case scope == ScopeProject && ref["cwd"] == "":
		return Errorf(ECodeInvalid, "scope project needs the request's source_ref cwd, and this request names none")
	}
	return nil
}

func (o Option) validateRemember(i int) error {
	if o.Remember == nil {
		return nil
	}
	if o.Effect != EffectAllow {
		return Errorf(ECodeInvalid, "options[%d].remember is only for an option whose effect is allow", i)
	}
	return ValidateRemember("options["+strconv.Itoa(i)+"].remember", o.Remember.Scope, o.Remember.For)
}
