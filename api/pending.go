package api

import "time"

// NewPending is the body of POST /v1/pending and of POST /v1/pending/claim: one
// exact HTTP request as the sandbox middleware saw it. MaxWait (seconds),
// PendingID, Body and BodySize apply to filing only.
//
// Body (base64 in JSON) is the request body, or its first MaxPendingBody bytes,
// for the operator to read; BodySize is the whole body's length (default
// len(Body)). A complete body must hash to BodySHA256. Neither is part of the
// digest: BodySHA256 binds the body.
type NewPending struct {
	Sandbox    string `json:"sandbox"`
	Policy     string `json:"policy,omitempty"`
	Middleware string `json:"middleware,omitempty"`
	Method     string `json:"method"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
	Path       string `json:"path"`
	Query      string `json:"query,omitempty"`
	BodySHA256 string `json:"body_sha256,omitempty"`
	PendingID  string `json:"pending_id,omitempty"`
	MaxWait    *int64 `json:"max_wait,omitempty"`
	Body       []byte `json:"body,omitempty"`
	BodySize   *int64 `json:"body_size,omitempty"`
}

// MaxPendingBody is the most of a request body a filing carries for the
// operator to read; a longer body is sent as its first MaxPendingBody bytes.
const MaxPendingBody = 8 << 10

// PendingStatus is the answer of GET /v1/pending/{pending_id}. Status is
// pending, approved, denied or expired.
type PendingStatus struct {
	PendingID string    `json:"pending_id"`
	Status    string    `json:"status"`
	Digest    string    `json:"digest"`
	ExpiresAt time.Time `json:"expires_at"`
	RequestID string    `json:"request_id"`
	Released  bool      `json:"released"`
}

// PendingWait is the answer of GET /v1/pending/{pending_id}/wait.
type PendingWait struct {
	PendingStatus
	TimedOut bool `json:"timed_out"`
}

// NextStep is one thing the agent may do next.
type NextStep struct {
	Action string `json:"action"`
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
	When   string `json:"when,omitempty"`
	Detail string `json:"detail"`
}

// AgentBody is what the sandbox hands the agent instead of the real answer:
// written by Gatehouse, never by the middleware. It is also the answer of a
// claim that releases nothing (approval_pending, approval_denied,
// approval_expired).
type AgentBody struct {
	Error         string     `json:"error"`
	Detail        string     `json:"detail"`
	Policy        string     `json:"policy"`
	Middleware    string     `json:"middleware"`
	PendingID     string     `json:"pending_id"`
	ExpiresAt     time.Time  `json:"expires_at"`
	NextSteps     []NextStep `json:"next_steps"`
	AgentGuidance string     `json:"agent_guidance"`
}

// AgentResponse is the HTTP response the sandbox should hand the agent.
type AgentResponse struct {
	Status int       `json:"status"`
	Body   AgentBody `json:"body"`
}

// PendingFiled is the answer of POST /v1/pending. ClaimNow says a rule approved
// it at once; otherwise Response is what to hand the agent.
type PendingFiled struct {
	PendingID string         `json:"pending_id"`
	Status    string         `json:"status"`
	ExpiresAt time.Time      `json:"expires_at"`
	Digest    string         `json:"digest"`
	RequestID string         `json:"request_id"`
	ClaimNow  bool           `json:"claim_now"`
	Response  *AgentResponse `json:"response,omitempty"`
}

// Claimed is the answer of a claim that released a grant.
type Claimed struct {
	Released  bool   `json:"released"`
	PendingID string `json:"pending_id"`
	RequestID string `json:"request_id"`
	Digest    string `json:"digest"`
}
