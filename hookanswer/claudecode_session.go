package hookanswer

import (
	"strings"

	"github.com/gatehousehq/gatehouse/api"
)

// Claude Code's session events: they say whether the session waits for its
// person or moved on, and are answered at once with no decision.
const (
	EventNotification     = "Notification"
	EventStop             = "Stop"
	EventSubagentStop     = "SubagentStop"
	EventUserPromptSubmit = "UserPromptSubmit"
	EventSessionStart     = "SessionStart"
	EventSessionEnd       = "SessionEnd"
	EventPostToolUse      = "PostToolUse"
)

// AgentClaudeCode is the agent name Claude Code's sessions are filed under.
const AgentClaudeCode = "claude-code"

// waitingNotifications are the Notification types that mean Claude Code waits
// for its person.
var waitingNotifications = map[string]bool{"permission_prompt": true, "idle_prompt": true, "elicitation_dialog": true, "agent_needs_input": true}

// ClaudeCodeSessionInput is the part of a session event's hook input Gatehouse
// reads (fields as recorded from the real CLI; unknown ones are ignored).
type ClaudeCodeSessionInput struct {
	SessionID            string `json:"session_id"`
	Cwd                  string `json:"cwd"`
	HookEventName        string `json:"hook_event_name"`
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
	Message              string `json:"message"`
	NotificationType     string `json:"notification_type"`
	// Prompt is what the user typed (UserPromptSubmit): kept, the last few
	// per session, for the advisory reviewer as the session's authorisation.
	Prompt string `json:"prompt"`
}

// IsClaudeCodeSessionEvent reports whether a hook input's hook_event_name is
// one of the session events (not a tool call to decide).
func IsClaudeCodeSessionEvent(body []byte) bool {
	name, _ := eventName(body)
	switch name {
	case EventNotification, EventStop, EventSubagentStop, EventUserPromptSubmit, EventSessionStart, EventSessionEnd, EventPostToolUse:
		return true
	}
	return false
}

// ParseClaudeCodeSession reads a session event's hook input.
func ParseClaudeCodeSession(body []byte) (*ClaudeCodeSessionInput, error) {
	return parseSession(body, func(in *ClaudeCodeSessionInput) string { return in.SessionID })
}

// Event is what the hook input says of the session, and false for an input
// that says nothing of it (a Notification of another type):
//   - Stop, and a permission_prompt, idle_prompt, elicitation_dialog or
//     agent_needs_input (auto mode hands a choice back) Notification: it
//     waits (Stop with Claude's last message; a Notification with its own,
//     except idle_prompt, which keeps the last one);
//   - UserPromptSubmit, PostToolUse, SubagentStop: it moved on (a subagent
//     ending means the session itself still works);
//   - SessionStart: it started; SessionEnd: it ended.
func (in *ClaudeCodeSessionInput) Event(machine string) (api.SessionEvent, bool) {
	e := api.SessionEvent{Session: in.SessionID, Agent: AgentClaudeCode, Machine: machine, Cwd: in.Cwd}
	switch in.HookEventName {
	case EventStop:
		e.Event, e.Message = "waiting", in.LastAssistantMessage
	case EventNotification:
		if !waitingNotifications[in.NotificationType] {
			return e, false
		}
		e.Event = "waiting"
		if in.NotificationType != "idle_prompt" {
			e.Message = in.Message
		}
	case EventUserPromptSubmit, EventPostToolUse, EventSubagentStop:
		e.Event = "moved"
		if in.HookEventName == EventUserPromptSubmit {
			e.Prompt = in.Prompt
		}
	case EventSessionStart:
		e.Event = "started"
	case EventSessionEnd:
		e.Event = "ended"
	default:
		return e, false
	}
	return e, true
}

// StopAnswer is a Stop hook's answer that continues the session, the same for
// Claude Code and Codex: Claude Code sends the model "Stop hook feedback:\n"
// and Reason, Codex a user message <hook_prompt …>Reason</hook_prompt>, and
// each runs another turn.
type StopAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// ReplyOf is the operator's free-text answer on a settled waiting item, and
// false when it was settled any other way (moved on, ended, retired,
// dismissed, expired): only an operator's answer continues the session. An
// answer of blanks continues nothing: Codex refuses a block whose reason has
// no text.
func ReplyOf(r *api.Request) (string, bool) {
	if r == nil || r.Kind != "waiting" || r.Status != "resolved" || r.Answer == nil || strings.TrimSpace(*r.Answer) == "" || r.Decision != nil {
		return "", false
	}
	if r.DecidedVia != nil {
		switch *r.DecidedVia {
		case "moved_on", "ended", "retired", "expiry":
			return "", false
		}
	}
	return *r.Answer, true
}
