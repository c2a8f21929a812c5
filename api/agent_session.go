package api

import "time"

// AgentSession is one agent session as GET /v1/agent-sessions lists it. State
// is working, waiting (its waiting item is open), blocked (another request
// filed under it is open) or ended; Since is when it entered that state.
type AgentSession struct {
	ID           string    `json:"id"`
	Agent        string    `json:"agent"`
	RuntimeID    *string   `json:"runtime_id"`
	Machine      string    `json:"machine"`
	Cwd          string    `json:"cwd"`
	State        string    `json:"state"`
	Since        time.Time `json:"since"`
	OpenRequests int       `json:"open_requests"`
	LastMessage  string    `json:"last_message"`
	WaitingID    *string   `json:"waiting_id"`
}

// AgentSessions is the answer of GET /v1/agent-sessions: waiting and blocked
// sessions first, longest first, then working ones, then ended ones.
type AgentSessions struct {
	Sessions []AgentSession `json:"sessions"`
}

// SessionEvent is the body of POST /v1/agent-sessions/events: what one of the
// caller's sessions did. Event is started, waiting (it stopped and waits for
// its person; Message is its last message; CanReply when the reporter can
// carry an answer back), moved (it moved on) or ended.
type SessionEvent struct {
	Session   string  `json:"session"`
	Agent     string  `json:"agent"`
	Event     string  `json:"event"`
	Machine   string  `json:"machine,omitempty"`
	Cwd       string  `json:"cwd,omitempty"`
	RuntimeID *string `json:"runtime_id,omitempty"`
	Message   string  `json:"message,omitempty"`
	// CanReply says the reporter carries the operator's answer back to the
	// session (a Stop hook run with --wait-reply, a headless bridge): only
	// then does the waiting item take a free-text answer.
	CanReply bool `json:"can_reply,omitempty"`
	// Prompt is the user's prompt that moved the session on, when it was one
	// (UserPromptSubmit): the advisory reviewer reads the last few.
	Prompt string `json:"prompt,omitempty"`
}

// SessionEventAnswer is the session after the event and its waiting item
// while one is open.
type SessionEventAnswer struct {
	Session AgentSession `json:"session"`
	Waiting *Request     `json:"waiting"`
}
