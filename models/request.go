package models

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

// Kinds of request.
const (
	KindApproval   = "approval"
	KindQuestion   = "question"
	KindPermission = "permission"
	KindWaiting    = "waiting"
	KindReview     = "review"
	KindFailure    = "failure"
	KindSetup      = "setup"
)

// Statuses. Only StatusOpen is not final.
const (
	StatusOpen      = "open"
	StatusResolved  = "resolved"
	StatusExpired   = "expired"
	StatusDismissed = "dismissed"
	StatusCancelled = "cancelled"
)

// Option effects.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
)

// Actuation states: what became of the forward to the runtime.
const (
	ActuationNone      = "none"
	ActuationPending   = "pending"
	ActuationDelivered = "delivered"
	ActuationConflict  = "conflict"
	ActuationFailed    = "failed"
)

// Ways a decision is taken; rules add "rule:NAME".
const (
	ViaAPI    = "api"
	ViaPage   = "page"
	ViaExpiry = "expiry"
)

// Limits on what a filer may send.
const (
	MaxTitle   = 200
	MaxSummary = 2000
	MaxDetail  = 32 * 1024
	MaxOptions = 16
	MaxAnswer  = 8 * 1024
	MaxNote    = 2000
	MaxSaves   = 500
)

var (
	// OptionIDPattern is the rule every option id (and pending id) follows.
	OptionIDPattern = lazyregexp.New(`^[a-z][a-z0-9_]{0,63}$`)
	// Kinds and Risks are the values a request's kind and risk may take.
	Kinds   = map[string]bool{KindApproval: true, KindQuestion: true, KindPermission: true, KindWaiting: true, KindReview: true, KindFailure: true, KindSetup: true}
	Risks   = map[string]bool{"low": true, "medium": true, "high": true}
	sources = map[string]bool{"session": true, "broker": true, "host": true, "system": true}
)

// Option is one choice offered to the operator.
type Option struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Effect string `json:"effect,omitempty"`
	// Saves, when set, says what choosing the option saves beyond this one
	// decision ("Bash(git push:*) to project settings"): shown on the card so
	// a standing rule never hides behind a label.
	Saves string `json:"saves,omitempty"`
	// Remember, when set, is what choosing this allow also remembers in
	// Gatehouse (scope and duration; the match is derived, never filed).
	Remember *api.RememberOffer `json:"remember,omitempty"`
}

// Plain reports whether choosing o decides this request and nothing more: it
// saves nothing in the runtime and remembers nothing in Gatehouse. Only a
// plain allow is what a batch, a remembered allow or the Remember… control
// may choose.
func (o Option) Plain() bool { return o.Saves == "" && o.Remember == nil }

// Request is the stored record of one moment where a person must decide.
type Request struct {
	ID             string `gorm:"primaryKey;size:40"`
	Kind           string `gorm:"size:16;not null"`
	Status         string `gorm:"size:16;not null;index:idx_requests_status_expires,priority:1"`
	Version        int    `gorm:"not null"`
	Title          string `gorm:"not null"`
	Summary        string
	Detail         string
	Risk           string `gorm:"size:8"`
	Tool           string `gorm:"size:128"`
	Command        string
	Options        []Option `gorm:"serializer:json"`
	AllowAnswer    bool     `gorm:"not null;default:false"`
	DefaultOption  string   `gorm:"size:64"`
	Decision       *string  `gorm:"size:64"`
	Answer         *string
	Note           *string
	Source         string            `gorm:"size:16"`
	SourceRef      map[string]string `gorm:"serializer:json"`
	RuntimeID      *string           `gorm:"size:40;index:idx_requests_runtime_set,where:runtime_id IS NOT NULL"`
	PendingID      *string           `gorm:"size:64;uniqueIndex:idx_requests_owner_pending_set,priority:2,where:pending_id IS NOT NULL"`
	OwnerID        string            `gorm:"size:40;not null;index;uniqueIndex:idx_requests_idem_set,priority:1;uniqueIndex:idx_requests_owner_pending_set,priority:1"`
	IdempotencyKey *string           `gorm:"size:200;uniqueIndex:idx_requests_idem_set,priority:2,where:idempotency_key IS NOT NULL"`
	// FilingDigest is the digest of the filing as received (NewRequest.digest):
	// a repeated key answers the first record only for the same body.
	FilingDigest   string    `gorm:"size:64;not null;default:''"`
	CreatedBy      string    `gorm:"size:200;not null"`
	CreatedAt      time.Time `gorm:"not null;index"`
	UpdatedAt      time.Time `gorm:"not null"`
	ExpiresAt      time.Time `gorm:"not null;index:idx_requests_status_expires,priority:2"`
	ResolvedAt     *time.Time
	DecidedBy      *string `gorm:"size:200"`
	DecidedVia     *string `gorm:"size:200"`
	ActuationState string  `gorm:"size:16;not null;default:none"`
	Attempts       int     `gorm:"not null;default:0"`
	// A hold (set at filing by a rule with action hold): the request goes to the
	// operator, and if it is still open at HoldUntil, HoldThen (an offered option
	// id) is decided with decided_via "rule:HoldRule (window)". HoldEffect is that
	// option's effect when the hold was set: if an edit changes it, the hold lapses.
	HoldRule   *string    `gorm:"size:100"`
	HoldUntil  *time.Time `gorm:"index:idx_requests_hold_set,where:hold_until IS NOT NULL"`
	HoldThen   *string    `gorm:"size:64"`
	HoldEffect *string    `gorm:"size:16"`
	// Sealed requests refuse every edit. It defaults to false in the column so
	// rows from before sealing keep the editability they were filed with; the
	// store sets it on every new filing that does not opt out.
	Sealed   bool `gorm:"not null;default:false"`
	EditedAt *time.Time
	// DecidedDigest is the ActionDigest of the version a decision was made on,
	// written by resolve in the decision's own update.
	DecidedDigest *string `gorm:"size:64"`
	// An approval policy (from the filer or a require rule), the votes cast
	// under it, and the person the filing token acts for, who may not vote.
	Approvers *Approvers `gorm:"type:text;serializer:json"`
	Votes     Votes      `gorm:"type:text;serializer:json"`
	FiledFor  string     `gorm:"size:100"`
	// The policy's escalation as it fires (escalation.go), server-assigned:
	// how many steps have fired, when the next is due (filing time plus its
	// after; an edit does not move it), and each fired step.
	EscalationStep int         `gorm:"not null;default:0"`
	EscalateAt     *time.Time  `gorm:"index:idx_requests_escalate_set,where:escalate_at IS NOT NULL"`
	Escalations    []Escalated `gorm:"type:text;serializer:json"`
	// GrantID is the remembered allow that decided the request, if one did.
	GrantID *string `gorm:"size:40"`
	// Review is the advisory reviewer's reading (review.go), server-assigned:
	// written without raising the version, cleared by an edit.
	Review *Review `gorm:"type:text;serializer:json"`
}

// Held reports whether the request is open and waiting out a rule's hold window.
func (r *Request) Held() bool { return r.Open() && r.HoldUntil != nil && r.HoldThen != nil }

// Open reports whether the request still waits for a decision.
func (r *Request) Open() bool { return r.Status == StatusOpen }

// Option returns the offered option with id, if any.
func (r *Request) Option(id string) (Option, bool) {
	for _, o := range r.Options {
		if o.ID == id {
			return o, true
		}
	}
	return Option{}, false
}

// DecisionEffect is the effect of the decision taken, or "" when none was or it
// was a plain answer.
func (r *Request) DecisionEffect() string {
	if r.Decision == nil {
		return ""
	}
	o, _ := r.Option(*r.Decision)
	return o.Effect
}

// NewRequest is what a filer sends; the store fills in the rest.
type NewRequest struct {
	Kind          string
	Title         string
	Summary       string
	Detail        string
	Risk          string
	Tool          string
	Command       string
	Options       []Option
	AllowAnswer   bool
	DefaultOption string
	Source        string
	SourceRef     map[string]string
	RuntimeID     *string
	PendingID     *string
	ExpiresIn     time.Duration // 0: the server default
	// Unsealed makes the request editable by its owner; every other filing
	// (hook, ask, MCP, pending) is sealed.
	Unsealed  bool
	Approvers *Approvers // the filer's policy: only ever stricter than the rules'
}

// Digest is the hex SHA-256 of the normalised filing: every field the filer
// sent, so a new field is covered without being listed.
func (n *NewRequest) Digest() string {
	b, err := json.Marshal(n) // struct fields in order, map keys sorted: canonical enough to compare
	if err != nil {
		panic("models: filing digest: " + err.Error()) // strings, numbers and slices always marshal
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Normalize fills defaults and validates. It never touches the store.
func (n *NewRequest) Normalize() error {
	if n.Kind == "" {
		n.Kind = KindApproval
	}
	if !Kinds[n.Kind] {
		return Errorf(ECodeInvalid, "kind %q is not one of approval, question, permission, waiting, review, failure, setup", n.Kind)
	}
	// Risk is optional: a filer that gave none gets none, so a badge on the
	// page always means someone judged the risk.
	if n.Risk != "" && !Risks[n.Risk] {
		return Errorf(ECodeInvalid, "risk %q is not one of low, medium, high", n.Risk)
	}
	if n.Source == "" {
		n.Source = "session"
	}
	if !sources[n.Source] {
		return Errorf(ECodeInvalid, "source %q is not one of session, broker, host, system", n.Source)
	}
	if n.ExpiresIn < 0 {
		return Errorf(ECodeInvalid, "expires_in must be positive")
	}
	if n.Approvers != nil {
		if err := n.Approvers.Validate("approvers"); err != nil {
			return err
		}
		if err := checkEscalationEnd(n.Approvers, n.Options, n.DefaultOption); err != nil {
			return err
		}
	}
	if err := n.validateFiling(); err != nil {
		return err
	}
	for i, o := range n.Options {
		if o.Remember != nil {
			if err := RememberFits(o.Remember.Scope, n.SourceRef); err != nil {
				return Errorf(ECodeInvalid, "options[%d].remember: %s", i, err.(*Error).Detail)
			}
		}
	}
	return ValidateContent(n.Title, n.Summary, n.Detail, n.Options, n.DefaultOption, n.Kind, n.AllowAnswer)
}

// ValidateContent checks what the operator will see: the text and the options.
// Filing and editing share it.
func ValidateContent(title, summary, detail string, options []Option, def, kind string, allowAnswer bool) error {
	if strings.TrimSpace(title) == "" {
		return Errorf(ECodeInvalid, "title is required")
	}
	if len(title) > MaxTitle {
		return Errorf(ECodeInvalid, "title is longer than %d bytes", MaxTitle)
	}
	if len(summary) > MaxSummary {
		return Errorf(ECodeInvalid, "summary is longer than %d bytes", MaxSummary)
	}
	if len(detail) > MaxDetail {
		return Errorf(ECodeInvalid, "detail is longer than %d bytes", MaxDetail)
	}
	if len(options) == 0 && !(kind == KindQuestion && allowAnswer) && !Silent(kind) {
		return Errorf(ECodeInvalid, "options are required: offer at least one")
	}
	if len(options) > MaxOptions {
		return Errorf(ECodeInvalid, "at most %d options", MaxOptions)
	}
	seen := map[string]bool{}
	for i, o := range options {
		if !OptionIDPattern.MatchString(o.ID) {
			return Errorf(ECodeInvalid, "options[%d].id %q must match %s", i, o.ID, OptionIDPattern)
		}
		if seen[o.ID] {
			return Errorf(ECodeInvalid, "options[%d].id %q is repeated", i, o.ID)
		}
		seen[o.ID] = true
		if strings.TrimSpace(o.Label) == "" || len(o.Label) > 100 {
			return Errorf(ECodeInvalid, "options[%d].label must be 1 to 100 bytes", i)
		}
		if len(o.Saves) > MaxSaves {
			return Errorf(ECodeInvalid, "options[%d].saves is longer than %d bytes", i, MaxSaves)
		}
		if o.Effect != "" && o.Effect != EffectAllow && o.Effect != EffectDeny {
			return Errorf(ECodeInvalid, "options[%d].effect %q must be allow, deny or absent", i, o.Effect)
		}
		if err := o.validateRemember(i); err != nil {
			return err
		}
	}
	if def != "" && !seen[def] {
		return Errorf(ECodeInvalid, "default_option %q is not one of the options", def)
	}
	if err := contentTexts(title, summary, detail, options); err != nil {
		return err
	}
	return CheckMisleading(options)
}

// Silent reports whether a kind is informational: it may carry no options and
// is retired by dismissal rather than decided.
func Silent(kind string) bool { return kind == KindWaiting || kind == KindReview }

// Dismissable reports whether an operator may retire r without deciding it:
// informational items, and plain questions or setup items that gate no work
// (no allow/deny option, no runtime holding a live callback), such as an MCP
// consult the agent has already moved on from.
func (r *Request) Dismissable() bool {
	if Silent(r.Kind) {
		return true
	}
	if r.RuntimeID != nil || (r.Kind != KindQuestion && r.Kind != KindSetup) {
		return false
	}
	for _, o := range r.Options {
		if o.Effect != "" {
			return false
		}
	}
	return true
}

// Interrupting reports whether a kind should interrupt the operator.
func Interrupting(kind string) bool {
	switch kind {
	case KindApproval, KindQuestion, KindPermission, KindFailure:
		return true
	}
	return false
}
