package hookanswer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehousehq/gatehouse/api"
)

// Claude Code hook events the hook answers.
const (
	EventPreToolUse        = "PreToolUse"
	EventPermissionRequest = "PermissionRequest"
)

// api.Option ids the hook offers; the decision is mapped back by effect, and
// "project" (like OptionSession) also carries Claude Code's suggested rule.
const (
	OptionOnce    = "once"
	OptionProject = "project"
	OptionDeny    = "deny"
)

// Limits the server enforces on what the hook files (models.MaxTitle, MaxDetail).
const (
	maxHookTitle  = 200
	maxHookDetail = 32 * 1024
)

// ClaudeCodeHookInput is the part of Claude Code's hook input (JSON on stdin)
// that Gatehouse reads. Unknown fields are ignored: Claude Code adds fields
// over time.
type ClaudeCodeHookInput struct {
	SessionID             string            `json:"session_id"`
	TranscriptPath        string            `json:"transcript_path"`
	Cwd                   string            `json:"cwd"`
	PromptID              string            `json:"prompt_id"`
	HookEventName         string            `json:"hook_event_name"`
	ToolName              string            `json:"tool_name"`
	ToolInput             json.RawMessage   `json:"tool_input"`
	ToolUseID             string            `json:"tool_use_id"`
	PermissionSuggestions []json.RawMessage `json:"permission_suggestions"`
}

// ParseClaudeCodeHook reads one hook input and checks it is an event the hook
// answers.
func ParseClaudeCodeHook(r io.Reader) (*ClaudeCodeHookInput, error) {
	var in ClaudeCodeHookInput
	if err := json.NewDecoder(io.LimitReader(r, 8<<20)).Decode(&in); err != nil {
		return nil, fmt.Errorf("hook input is not JSON: %w", err)
	}
	if in.HookEventName != EventPreToolUse && in.HookEventName != EventPermissionRequest {
		return nil, fmt.Errorf("hook_event_name %q: only PreToolUse and PermissionRequest are answered", in.HookEventName)
	}
	if in.ToolName == "" {
		return nil, errors.New("hook input has no tool_name")
	}
	return &in, nil
}

// Command is what the tool acts on: the command line, else the file path,
// URL or pattern in the tool input.
func (in *ClaudeCodeHookInput) Command() string {
	var fields map[string]any
	_ = json.Unmarshal(in.ToolInput, &fields)
	for _, k := range []string{"command", "file_path", "notebook_path", "path", "url", "pattern", "query"} {
		if v, ok := fields[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// Title is the line Gatehouse writes for the operator from the tool and its
// command or path; never text chosen by the model alone.
func (in *ClaudeCodeHookInput) Title() string {
	cmd := strings.Join(strings.Fields(in.Command()), " ")
	var t string
	switch {
	case cmd == "":
		t = "Claude Code wants to use " + in.ToolName
	case in.ToolName == "Bash":
		t = "Run: " + cmd
	case in.ToolName == "Write":
		t = "Write " + cmd
	case in.ToolName == "Edit" || in.ToolName == "MultiEdit" || in.ToolName == "NotebookEdit":
		t = "Edit " + cmd
	case in.ToolName == "Read":
		t = "Read " + cmd
	case in.ToolName == "WebFetch":
		t = "Fetch " + cmd
	default:
		t = in.ToolName + ": " + cmd
	}
	return truncate(t, maxHookTitle)
}

// api.NewRequest is the permission request the hook files. The request expires
// with the hook's wait, so a hook killed by Claude Code leaves nothing open
// for long.
func (in *ClaudeCodeHookInput) NewRequest(wait time.Duration) api.NewRequest {
	opts := in.options()
	ref := map[string]string{"session": in.SessionID, "cwd": in.Cwd, "transcript_path": in.TranscriptPath}
	if in.ToolUseID != "" {
		ref["tool_use_id"] = in.ToolUseID
	}
	summary := "Claude Code asks to use " + in.ToolName
	if in.Cwd != "" {
		summary += " in " + in.Cwd
	}
	var fields map[string]any
	if json.Unmarshal(in.ToolInput, &fields) == nil {
		if d, ok := fields["description"].(string); ok && d != "" {
			summary += ": " + d
		}
	}
	expiresIn := int64((wait+time.Second-1)/time.Second) + hookExpiryMargin
	return api.NewRequest{
		Kind: "permission", Title: in.Title(), Summary: truncate(summary, 2000), Detail: prettyDetail(in.ToolInput),
		Tool: in.ToolName, Command: in.Command(), Options: opts, Source: "session", SourceRef: ref,
		ExpiresIn: &expiresIn,
	}
}

// hookExpiryMargin (seconds) lets the hook's own cancel, not the expiry, close
// a request it stopped waiting for.
const hookExpiryMargin = 10

// IdempotencyKey names this one tool call, so a retried filing answers the
// same record. Without a tool_use_id (PermissionRequest) the prompt and a
// digest of the tool input stand in for it.
func (in *ClaudeCodeHookInput) IdempotencyKey() string {
	call := in.ToolUseID
	if call == "" {
		sum := sha256.Sum256(append([]byte(in.ToolName+"\n"), in.ToolInput...))
		call = in.PromptID + ":" + hex.EncodeToString(sum[:12])
	}
	return "claude-code:" + in.HookEventName + ":" + in.SessionID + ":" + call
}

// KeyedByCall reports whether the idempotency key names exactly one tool call.
func (in *ClaudeCodeHookInput) KeyedByCall() bool { return in.ToolUseID != "" }

// ClaudeCodeHookOutput is the JSON a hook prints.
type ClaudeCodeHookOutput struct {
	HookSpecificOutput any `json:"hookSpecificOutput"`
}

type preToolUseOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

type permissionRequestOutput struct {
	HookEventName string                    `json:"hookEventName"`
	Decision      permissionRequestDecision `json:"decision"`
}

type permissionRequestDecision struct {
	Behavior           string            `json:"behavior"`
	Message            string            `json:"message,omitempty"`
	UpdatedPermissions []json.RawMessage `json:"updatedPermissions,omitempty"`
}

// Answer turns a settled record into the hook's output. Anything but an
// allow or deny decision (expired, cancelled, dismissed) is no decision: the
// fallback, so Claude Code asks in its own way.
func (in *ClaudeCodeHookInput) Answer(r *api.Request) *ClaudeCodeHookOutput {
	effect := ""
	if r.Status == "resolved" {
		effect = r.Effect()
	}
	if effect != "allow" && effect != "deny" {
		return in.Fallback(fmt.Sprintf("Gatehouse request %s ended %s without a decision", r.ID, r.Status))
	}
	if !in.filedAs(r) {
		return in.Fallback(fmt.Sprintf("Gatehouse request %s was changed after the hook filed it; its decision does not count here", r.ID))
	}
	reason := ""
	if r.Note != nil && strings.TrimSpace(*r.Note) != "" {
		reason = *r.Note
	} else {
		by := "the operator"
		if r.DecidedBy != nil {
			by = *r.DecidedBy
		}
		verb := map[string]string{"allow": "Allowed", "deny": "Denied"}[effect]
		reason = fmt.Sprintf("%s in Gatehouse by %s", verb, by)
	}
	if in.HookEventName == EventPreToolUse {
		return &ClaudeCodeHookOutput{preToolUseOutput{HookEventName: EventPreToolUse, PermissionDecision: effect, PermissionDecisionReason: reason}}
	}
	d := permissionRequestDecision{Behavior: effect}
	if effect == "deny" {
		d.Message = reason
	}
	if effect == "allow" && r.Decision != nil {
		// A scope the operator chose: exactly the rule its label showed.
		d.UpdatedPermissions = in.updatesFor(*r.Decision)
	}
	return &ClaudeCodeHookOutput{permissionRequestOutput{HookEventName: EventPermissionRequest, Decision: d}}
}

// Fallback is the answer when Gatehouse gave no decision: "ask" for
// PreToolUse, and nothing at all (nil) for PermissionRequest, so Claude Code
// shows its own prompt. Never allow.
func (in *ClaudeCodeHookInput) Fallback(reason string) *ClaudeCodeHookOutput {
	if in.HookEventName != EventPreToolUse {
		return nil
	}
	return &ClaudeCodeHookOutput{preToolUseOutput{HookEventName: EventPreToolUse, PermissionDecision: "ask", PermissionDecisionReason: reason}}
}

// prettyDetail is the tool input as indented JSON, cut to what the server takes.
func prettyDetail(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return truncate(string(raw), maxHookDetail)
	}
	return truncate(buf.String(), maxHookDetail)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// ClaudeCodeEvent names the hook event of a body that may be cut short or
// not parse at all (a hook endpoint's input over its limit): the top-level
// hook_event_name, read token by token up to where the body stops being
// JSON; "" when none is read, or two differ. Claude Code writes
// hook_event_name before tool_input, the part an agent can make large, and
// what the agent writes sits inside tool_input, never at the top level.
func ClaudeCodeEvent(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	event := ""
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		if t != "hook_event_name" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
			continue
		}
		var ev string
		if dec.Decode(&ev) != nil || (event != "" && ev != event) {
			return ""
		}
		event = ev
	}
	return event
}

// ClaudeCodeNoDecision is the answer that decides nothing for event, when
// Gatehouse could not even read the input: PreToolUse "ask", nothing for
// any other event. An event it cannot name is answered as PreToolUse, the
// one whose empty answer would let Claude Code go on: for another event an
// answer naming PreToolUse is a hook error, which leaves the call to Claude
// Code's own prompt there.
func ClaudeCodeNoDecision(event, reason string) *ClaudeCodeHookOutput {
	if event == "" {
		event = EventPreToolUse
	}
	return (&ClaudeCodeHookInput{HookEventName: event}).Fallback(reason)
}
