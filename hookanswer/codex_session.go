package hookanswer

import (
	"github.com/gatehousehq/gatehouse/api"
)

// AgentCodex is the agent name Codex's sessions are filed under.
const AgentCodex = "codex"

// CodexSessionInput is the part of a Codex session event's hook input
// Gatehouse reads, as Codex 0.169.0 sends it (its schemas
// {session-start,user-prompt-submit,stop,session-end}.command.input; fields
// Codex adds later are ignored). last_assistant_message may be null.
type CodexSessionInput struct {
	SessionID            string  `json:"session_id"`
	TurnID               string  `json:"turn_id"`
	Cwd                  string  `json:"cwd"`
	HookEventName        string  `json:"hook_event_name"`
	StopHookActive       bool    `json:"stop_hook_active"`
	LastAssistantMessage *string `json:"last_assistant_message"`
	// Prompt is what the user typed (UserPromptSubmit), kept, the last few,
	// for the advisory reviewer.
	Prompt string `json:"prompt"`
}

// IsCodexSessionEvent reports whether a hook input's hook_event_name is one
// of the session events Codex sends (SessionStart, UserPromptSubmit, Stop,
// SessionEnd), not a tool call to decide.
func IsCodexSessionEvent(body []byte) bool {
	name, _ := eventName(body)
	switch name {
	case EventStop, EventUserPromptSubmit, EventSessionStart, EventSessionEnd:
		return true
	}
	return false
}

// ParseCodexSession reads a session event's hook input.
func ParseCodexSession(body []byte) (*CodexSessionInput, error) {
	return parseSession(body, func(in *CodexSessionInput) string { return in.SessionID })
}

// Event is what the hook input says of the session: Stop, it waits with
// Codex's last message; UserPromptSubmit, it moved on; SessionStart, it
// started; SessionEnd, it ended.
func (in *CodexSessionInput) Event(machine string) (api.SessionEvent, bool) {
	e := api.SessionEvent{Session: in.SessionID, Agent: AgentCodex, Machine: machine, Cwd: in.Cwd}
	switch in.HookEventName {
	case EventStop:
		e.Event = "waiting"
		if in.LastAssistantMessage != nil {
			e.Message = *in.LastAssistantMessage
		}
	case EventUserPromptSubmit:
		e.Event, e.Prompt = "moved", in.Prompt
	case EventSessionStart:
		e.Event = "started"
	case EventSessionEnd:
		e.Event = "ended"
	default:
		return e, false
	}
	return e, true
}
