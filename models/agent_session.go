package models

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Agent session states as GET /v1/agent-sessions reports them.
const (
	SessionWorking = "working"
	SessionWaiting = "waiting"
	SessionBlocked = "blocked"
	SessionEnded   = "ended"
)

// What a session event says happened (SessionEvent.Kind).
const (
	EventStarted = "started" // the session began (or resumed)
	EventWaiting = "waiting" // it stopped and waits for its person
	EventMoved   = "moved"   // it moved on: a prompt, a tool call, a decided permission
	EventEnded   = "ended"   // it ended
)

// SessionRetireAfter is how long a session may go without an event before the
// sweeper retires it (ended; its waiting item resolves "retired").
const SessionRetireAfter = 24 * time.Hour

// MaxSessionID bounds a session id as a client names it.
const MaxSessionID = 200

// MaxSessionPrompts and MaxPromptText bound the user prompts kept per session.
const (
	MaxSessionPrompts = 5
	MaxPromptText     = 2000
)

// AgentSession is one agent session (a Claude Code session_id) as its events
// left it. It is keyed by the token that reported it and the client's id, so
// one agent's events never touch another's session of the same id.
type AgentSession struct {
	OwnerID   string  `gorm:"primaryKey;size:40"`
	ID        string  `gorm:"primaryKey;size:200"`
	Agent     string  `gorm:"size:32;not null"`
	RuntimeID *string `gorm:"size:40"`
	Machine   string  `gorm:"size:200"`
	Cwd       string
	Ended     bool `gorm:"not null;default:false"`
	// WaitingID is the session's waiting item while one may be open: at most
	// one per session, and only ever a request of kind waiting this session
	// filed, so moving on can resolve nothing else.
	WaitingID   *string `gorm:"size:40"`
	LastMessage string
	// Prompts are the user's last prompts (MaxSessionPrompts, each at most
	// MaxPromptText bytes), newest last: what the advisory reviewer reads as
	// the session's authorisation. Never tool output.
	Prompts   []string  `gorm:"type:text;serializer:json"`
	Since     time.Time `gorm:"not null"` // when the stored state last changed
	SeenAt    time.Time `gorm:"not null;index"`
	CreatedAt time.Time `gorm:"not null"`
}

// SessionEvent is one thing a session reported.
type SessionEvent struct {
	Session   string
	Agent     string // "claude-code"
	Kind      string // EventStarted, EventWaiting, EventMoved, EventEnded
	Machine   string
	Cwd       string
	RuntimeID *string
	Message   string // the agent's last message, for EventWaiting
	// CanReply: the reporter carries an answer back to the session (a Stop
	// hook that waits for one, a headless bridge), so the waiting item takes
	// one. Anything else shows the item with no answer box.
	CanReply bool
	Prompt   string // the user's prompt, for an EventMoved from UserPromptSubmit
}

// Validate checks what a client may send.
func (e *SessionEvent) Validate() error {
	switch {
	case e.Session == "":
		return Errorf(ECodeInvalid, "session is required")
	case len(e.Session) > MaxSessionID:
		return Errorf(ECodeInvalid, "session is longer than %d bytes", MaxSessionID)
	case e.Agent == "" || len(e.Agent) > 32:
		return Errorf(ECodeInvalid, "agent must be 1 to 32 bytes")
	case len(e.Machine) > 200:
		return Errorf(ECodeInvalid, "machine is longer than 200 bytes")
	case len(e.Cwd) > 4096:
		return Errorf(ECodeInvalid, "cwd is longer than 4096 bytes")
	}
	switch e.Kind {
	case EventStarted, EventWaiting, EventMoved, EventEnded:
	default:
		return Errorf(ECodeInvalid, "event %q is not one of started, waiting, moved, ended", e.Kind)
	}
	return nil
}

// SessionView is a session as listed: its state derived from its record and
// the open requests filed under it.
type SessionView struct {
	AgentSession
	State        string
	StateSince   time.Time
	OpenRequests int
}

// CleanText makes an agent's own text fit a request's text field: runes a
// field refuses become U+FFFD and it is cut to max bytes on a rune boundary.
// The last message of a session is shown, never refused: the session already
// said it.
func CleanText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if badRune(r, true) != "" {
			return '\uFFFD'
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
