package api

import (
	"time"
)

// Option is one choice offered to the operator.
type Option struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Effect string `json:"effect,omitempty"`
	// Saves, when set, says what choosing the option saves beyond this one
	// decision ("Bash(git push:*) to project settings"); the card shows it.
	Saves string `json:"saves,omitempty"`
	// Remember, when set, says what choosing the option also remembers in
	// Gatehouse (an allow only); the card shows it with the match it stores.
	Remember *RememberOffer `json:"remember,omitempty"`
}

// Actuation is what became of the forward to the runtime: none, pending,
// delivered, conflict or failed.
type Actuation struct {
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
}

// Hold is present while a rule holds an open request: at Until, unless someone
// decides first, Then is decided with decided_via "rule:RULE (window)".
type Hold struct {
	Rule  string    `json:"rule"`
	Until time.Time `json:"until"`
	Then  string    `json:"then"`
}

// Request is the record as the API returns it.
// Times are UTC.
type Request struct {
	ID            string            `json:"id"`
	Kind          string            `json:"kind"`
	Status        string            `json:"status"`
	Version       int               `json:"version"`
	Title         string            `json:"title"`
	Summary       string            `json:"summary"`
	Detail        string            `json:"detail"`
	Risk          *string           `json:"risk"` // null when the filer gave none
	Tool          string            `json:"tool,omitempty"`
	Command       string            `json:"command,omitempty"`
	Options       []Option          `json:"options"`
	AllowAnswer   bool              `json:"allow_answer"`
	DefaultOption *string           `json:"default_option"`
	Decision      *string           `json:"decision"`
	Answer        *string           `json:"answer"`
	Note          *string           `json:"note"`
	Source        string            `json:"source"`
	SourceRef     map[string]string `json:"source_ref"`
	RuntimeID     *string           `json:"runtime_id"`
	PendingID     *string           `json:"pending_id,omitempty"`
	CreatedBy     string            `json:"created_by"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	ExpiresAt     time.Time         `json:"expires_at"`
	ResolvedAt    *time.Time        `json:"resolved_at"`
	DecidedBy     *string           `json:"decided_by"`
	DecidedVia    *string           `json:"decided_via"`
	Actuation     Actuation         `json:"actuation"`
	Hold          *Hold             `json:"hold"`
	// Sealed requests cannot be edited; EditedAt is set once an unsealed one was.
	Sealed   bool       `json:"sealed"`
	EditedAt *time.Time `json:"edited_at"`
	// ActionDigest covers what the operator is shown (ActionDigest); DecidedDigest,
	// set with a decision, is the ActionDigest of the version decided on.
	ActionDigest  string     `json:"action_digest"`
	DecidedDigest *string    `json:"decided_digest"`
	Approvals     *Approvals `json:"approvals,omitempty"`
	// Escalation is the state of the policy's escalation, when it has one.
	Escalation *Escalation `json:"escalation,omitempty"`
	// GrantID names the remembered allow that decided the request
	// (decided_via "remembered").
	GrantID *string `json:"grant_id,omitempty"`
	// Review is the advisory reviewer's reading, when a reviewer is
	// configured: server-assigned, outside the action digest, never a decision.
	Review *Review `json:"review,omitempty"`
}

// Effect is the effect of the decision taken ("allow", "deny") or "".
func (r *Request) Effect() string {
	if r.Decision == nil {
		return ""
	}
	for _, o := range r.Options {
		if o.ID == *r.Decision {
			return o.Effect
		}
	}
	return ""
}

// NewRequest is the body of POST /v1/requests. ExpiresIn is whole seconds;
// absent means the server's default, and a value that is not positive is refused.
type NewRequest struct {
	Kind          string            `json:"kind,omitempty"`
	Title         string            `json:"title"`
	Summary       string            `json:"summary,omitempty"`
	Detail        string            `json:"detail,omitempty"`
	Risk          string            `json:"risk,omitempty"`
	Tool          string            `json:"tool,omitempty"`
	Command       string            `json:"command,omitempty"`
	Options       []Option          `json:"options,omitempty"`
	AllowAnswer   bool              `json:"allow_answer,omitempty"`
	DefaultOption string            `json:"default_option,omitempty"`
	Source        string            `json:"source,omitempty"`
	SourceRef     map[string]string `json:"source_ref,omitempty"`
	RuntimeID     *string           `json:"runtime_id,omitempty"`
	ExpiresIn     *int64            `json:"expires_in,omitempty"`
	// Sealed defaults to true: only "sealed": false makes the request editable.
	Sealed    *bool      `json:"sealed,omitempty"`
	Approvers *Approvers `json:"approvers,omitempty"`
}

// Patch is the body of PATCH /v1/requests/{id}: the version edited, and the
// fields to change (absent ones stay).
type Patch struct {
	Version       int       `json:"version"`
	Title         *string   `json:"title,omitempty"`
	Summary       *string   `json:"summary,omitempty"`
	Detail        *string   `json:"detail,omitempty"`
	Options       *[]Option `json:"options,omitempty"`
	DefaultOption *string   `json:"default_option,omitempty"`
}

// Decide is the body of POST /v1/requests/{id}/decide: the version decided on
// and an offered option id; Note is guidance that reaches the agent.
type Decide struct {
	Version  *int    `json:"version"`
	Decision *string `json:"decision"`
	Answer   *string `json:"answer,omitempty"`
	Note     *string `json:"note,omitempty"`
	// Remember keeps this allow for later filings (an allow option only).
	Remember *Remember `json:"remember,omitempty"`
}

// AttentionDecide is the same decide in the shape runtimes speak, at
// POST /api/operator-attention/permissions/decide.
type AttentionDecide struct {
	RequestID string `json:"requestId"`
	Decide
}

// Wait is the answer of GET /v1/requests/{id}/wait: the record at top level
// plus whether the wait ran out with the request still open.
type Wait struct {
	Request
	TimedOut bool `json:"timed_out"`
}

// List is the answer of GET /v1/requests, newest first; NextCursor is "" on the
// last page.
type List struct {
	Requests   []Request `json:"requests"`
	NextCursor string    `json:"next_cursor"`
}

// ErrorBody is every error answer. Request is the current record on a conflict.
type ErrorBody struct {
	Code    string   `json:"error"`
	Detail  string   `json:"detail"`
	Request *Request `json:"request,omitempty"`
}
