package models

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

// Pending grant statuses, as GET /v1/pending/{id} answers them.
const (
	GrantPending  = "pending"
	GrantApproved = "approved"
	GrantDenied   = "denied"
	GrantExpired  = "expired"
	// GrantReleased is a stored state only: an approved grant that released its
	// one request. It still answers "approved".
	GrantReleased = "released"
)

// Pending grant options: approve allows, deny (also the default on expiry) denies.
const (
	GrantOptionApprove = "approve"
	GrantOptionDeny    = "deny"
)

// DefaultPendingWait is how long a pending grant waits for a decision when the
// middleware asks for no max_wait.
const DefaultPendingWait = 10 * time.Minute

// Limits on the request a grant is bound to.
const (
	MaxGrantPath  = 4096
	MaxGrantQuery = 8192
)

var (
	// Names (sandbox, policy, middleware) are identifiers, not prose: they reach
	// the agent-facing body, so they cannot carry sentences.
	grantNamePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$`)
	methodPattern    = lazyregexp.New(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)
	hostPattern      = lazyregexp.New(`^(\[[0-9A-Fa-f:.%]+\]|[A-Za-z0-9._:-]{1,253})$`)
	sha256Pattern    = lazyregexp.New(`^[0-9A-Fa-f]{64}$`)
)

// Grant is one request-bound, single-use approval: the exact HTTP request a
// sandbox middleware holds, the approval request filed for it, and whether it
// has been claimed. The request's decision is the truth; State mirrors it so a
// claim can be one conditional UPDATE.
type Grant struct {
	// A pending id is unique per owner, and every lookup is scoped to its owner,
	// so one runtime's ids say nothing about another's.
	OwnerID    string     `gorm:"primaryKey;size:40;not null;index:idx_grants_digest,priority:2"`
	PendingID  string     `gorm:"primaryKey;size:64"`
	Digest     string     `gorm:"size:64;not null;index:idx_grants_digest,priority:1"`
	RequestID  string     `gorm:"size:40;not null;uniqueIndex"`
	Sandbox    string     `gorm:"size:128;not null"`
	Policy     string     `gorm:"size:128;not null"`
	Middleware string     `gorm:"size:128;not null"`
	Method     string     `gorm:"size:32;not null"`
	Host       string     `gorm:"size:255;not null"`
	Port       int        `gorm:"not null"`
	Path       string     `gorm:"not null"`
	Query      string     `gorm:"not null"`
	BodySHA256 string     `gorm:"column:body_sha256;size:64;not null"`
	State      string     `gorm:"size:16;not null"` // pending, approved, denied, expired, released
	CreatedAt  time.Time  `gorm:"not null"`
	ExpiresAt  time.Time  `gorm:"not null"`
	ClaimedAt  *time.Time // set once: by the release, or by the one claim told "denied"/"expired"
}

// Target is the exact request the grant is bound to.
func (g *Grant) Target() Target {
	return Target{Sandbox: g.Sandbox, Method: g.Method, Host: g.Host, Port: g.Port, Path: g.Path, Query: g.Query, BodySHA256: g.BodySHA256}
}

// Status is what the grant answers now, given its request r: the request's
// decision, except that an approval not claimed by expires_at has expired.
func (g *Grant) Status(r *Request, now time.Time) string {
	switch r.Status {
	case StatusOpen:
		if now.Before(r.ExpiresAt) {
			return GrantPending
		}
		return GrantExpired
	case StatusResolved:
		if r.DecidedVia != nil && *r.DecidedVia == ViaExpiry {
			return GrantExpired
		}
		if r.DecisionEffect() != EffectAllow {
			return GrantDenied
		}
		if g.ClaimedAt == nil && !now.Before(g.ExpiresAt) {
			return GrantExpired
		}
		return GrantApproved
	case StatusExpired:
		return GrantExpired
	}
	return GrantDenied // cancelled or dismissed: nothing was approved
}

// SettledState is the stored state a decided request gives its grant.
func SettledState(r *Request) string {
	switch {
	case r.Status == StatusOpen:
		return GrantPending
	case r.Status == StatusExpired, r.DecidedVia != nil && *r.DecidedVia == ViaExpiry:
		return GrantExpired
	case r.Status == StatusResolved && r.DecisionEffect() == EffectAllow:
		return GrantApproved
	}
	return GrantDenied
}

// NewGrant is what a middleware files: the exact request, who holds it, and
// optionally its own pending id and how long it can wait.
type NewGrant struct {
	Target
	Policy     string
	Middleware string
	PendingID  string        // "": one is generated
	MaxWait    time.Duration // 0: DefaultPendingWait
	Body       *GrantBody    // nil: the middleware sent none; the detail says so
}

// Normalize validates the target and puts method, host and body digest in
// canonical case. It never touches the store.
func (t *Target) Normalize() error {
	if !grantNamePattern.MatchString(t.Sandbox) {
		return Errorf(ECodeInvalid, "sandbox must match %s", grantNamePattern)
	}
	if !methodPattern.MatchString(t.Method) {
		return Errorf(ECodeInvalid, "method must be an HTTP method such as GET or POST")
	}
	if !hostPattern.MatchString(t.Host) {
		return Errorf(ECodeInvalid, "host must be a host name or IP address, without scheme, port or path")
	}
	if t.Port < 1 || t.Port > 65535 {
		return Errorf(ECodeInvalid, "port must be an integer from 1 to 65535")
	}
	if !strings.HasPrefix(t.Path, "/") || len(t.Path) > MaxGrantPath || !printableASCII(t.Path) {
		return Errorf(ECodeInvalid, "path must start with / and be the raw, percent-escaped path of at most %d bytes", MaxGrantPath)
	}
	if strings.HasPrefix(t.Query, "?") {
		return Errorf(ECodeInvalid, "query is the raw query without the leading ?")
	}
	if len(t.Query) > MaxGrantQuery || !printableASCII(t.Query) {
		return Errorf(ECodeInvalid, "query must be the raw, percent-escaped query of at most %d bytes", MaxGrantQuery)
	}
	if !sha256Pattern.MatchString(t.BodySHA256) {
		return Errorf(ECodeInvalid, "body_sha256 must be the hex SHA-256 of the body (for no body: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855)")
	}
	t.Method, t.Host, t.BodySHA256 = strings.ToUpper(t.Method), strings.ToLower(t.Host), strings.ToLower(t.BodySHA256)
	return nil
}

// Normalize validates what a middleware filed.
func (n *NewGrant) Normalize() error {
	if err := n.Target.Normalize(); err != nil {
		return err
	}
	if !grantNamePattern.MatchString(n.Policy) {
		return Errorf(ECodeInvalid, "policy must match %s", grantNamePattern)
	}
	if !grantNamePattern.MatchString(n.Middleware) {
		return Errorf(ECodeInvalid, "middleware must match %s", grantNamePattern)
	}
	if n.PendingID != "" && !OptionIDPattern.MatchString(n.PendingID) {
		return Errorf(ECodeInvalid, "pending_id must match %s", OptionIDPattern)
	}
	if n.MaxWait < 0 {
		return Errorf(ECodeInvalid, "max_wait must be a positive number of seconds")
	}
	if n.Body != nil {
		return n.Body.check(n.BodySHA256)
	}
	return nil
}

// printableASCII reports whether s is visible ASCII only: no spaces, controls or
// look-alike Unicode, so what the operator reads is what is matched.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// URL is the request as one line: scheme, host, explicit port, path and query.
// The scheme is a reading aid (http for port 80, else https); the digest does
// not include it.
func (t Target) URL() string {
	scheme := "https"
	if t.Port == 80 {
		scheme = "http"
	}
	u := scheme + "://" + t.Host + ":" + strconv.Itoa(t.Port) + t.Path
	if t.Query != "" {
		u += "?" + t.Query
	}
	return u
}

// ApprovalRequest is the approval Gatehouse files for a grant. Every word the
// operator reads is written here from the validated fields.
func (n *NewGrant) ApprovalRequest() NewRequest {
	t := n.Target
	where := t.Host
	if t.Port != 443 {
		where += ":" + strconv.Itoa(t.Port)
	}
	title := "Allow " + t.Method + " " + where + t.Path
	if len(title) > MaxTitle {
		title = title[:MaxTitle-len("…")] + "…"
	}
	query := t.Query
	if query == "" {
		query = "(none)"
	}
	return NewRequest{
		Kind:  KindApproval,
		Title: title,
		Summary: fmt.Sprintf("Sandbox %s is holding this exact request for your approval (policy %s, middleware %s). "+
			"Approve releases it once; deny refuses it.", t.Sandbox, n.Policy, n.Middleware),
		Detail: fmt.Sprintf("method: %s\nhost: %s\nport: %d\npath: %s\nquery: %s\nbody sha256: %s\ndigest: %s\npending id: %s\n%s",
			t.Method, t.Host, t.Port, t.Path, query, t.BodySHA256, Digest(t), n.PendingID, n.Body.text()),
		Risk:    "high",
		Tool:    "http",
		Command: t.Method + " " + t.URL(),
		Options: []Option{
			{ID: GrantOptionApprove, Label: "Approve", Effect: EffectAllow},
			{ID: GrantOptionDeny, Label: "Deny", Effect: EffectDeny},
		},
		DefaultOption: GrantOptionDeny,
		Source:        "broker",
		SourceRef: map[string]string{
			"sandbox": t.Sandbox, "policy": n.Policy, "middleware": n.Middleware,
			"method": t.Method, "host": t.Host, "port": strconv.Itoa(t.Port), "path": t.Path, "query": t.Query,
		},
		ExpiresIn: n.MaxWait,
	}
}
