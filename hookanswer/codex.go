package hookanswer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// CodexHookInput is Codex's command-hook input (JSON on stdin) for the two
// events Gatehouse answers, as Codex 0.169.0 sends them and as its schemas
// (codex-rs/hooks/schema/generated/{permission-request,pre-tool-use}.command.input.schema.json)
// require them. Fields Codex adds later are ignored; the ones the answer
// depends on are checked by ParseCodexHook.
type CodexHookInput struct {
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	TranscriptPath *string         `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Model          string          `json:"model"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`

	command, description string // from tool_input
}

// ParseCodexHook reads one hook input and checks it is a PermissionRequest or
// PreToolUse with the fields Codex's schema requires of it.
func ParseCodexHook(r io.Reader) (*CodexHookInput, error) {
	var in CodexHookInput
	if err := json.NewDecoder(io.LimitReader(r, 8<<20)).Decode(&in); err != nil {
		return nil, fmt.Errorf("hook input is not JSON: %w", err)
	}
	if in.HookEventName != EventPreToolUse && in.HookEventName != EventPermissionRequest {
		return nil, fmt.Errorf("hook_event_name %q: only PreToolUse and PermissionRequest are answered", in.HookEventName)
	}
	var ti struct {
		Command     *string `json:"command"`
		Description string  `json:"description"`
	}
	if len(in.ToolInput) == 0 || in.ToolInput[0] != '{' || json.Unmarshal(in.ToolInput, &ti) != nil {
		return nil, errors.New("hook input has no tool_input object")
	}
	missing := []string{}
	for name, v := range map[string]string{"session_id": in.SessionID, "cwd": in.Cwd, "tool_name": in.ToolName} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if ti.Command == nil {
		missing = append(missing, "tool_input.command")
	}
	if in.HookEventName == EventPreToolUse && in.ToolUseID == "" {
		missing = append(missing, "tool_use_id")
	}
	if in.HookEventName == EventPermissionRequest && in.TurnID == "" {
		missing = append(missing, "turn_id")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s input lacks %s", in.HookEventName, strings.Join(missing, ", "))
	}
	in.command, in.description = *ti.Command, ti.Description
	return &in, nil
}

// Command is what the tool acts on: tool_input.command, the model's command
// line as given (not Codex's `/bin/bash -lc '…'` form).
func (in *CodexHookInput) Command() string { return in.command }

// Title is the line Gatehouse writes for the operator from the tool and its
// command; never text chosen by the model alone.
func (in *CodexHookInput) Title() string {
	cmd := strings.Join(strings.Fields(in.command), " ")
	switch {
	case cmd == "":
		return truncate("Codex wants to use "+in.ToolName, maxHookTitle)
	case in.ToolName == "Bash":
		return truncate("Run: "+cmd, maxHookTitle)
	}
	return truncate(in.ToolName+": "+cmd, maxHookTitle)
}

// api.NewRequest is the sealed permission request the hook files; it expires with
// the hook's wait, so a hook Codex killed leaves nothing open for long.
func (in *CodexHookInput) NewRequest(wait time.Duration) api.NewRequest {
	opts := []api.Option{{ID: OptionOnce, Label: "Allow once", Effect: "allow"}, {ID: OptionDeny, Label: "Deny", Effect: "deny"}}
	ref := map[string]string{"session": in.SessionID, "cwd": in.Cwd}
	if in.TurnID != "" {
		ref["turn"] = in.TurnID
	}
	if in.TranscriptPath != nil && *in.TranscriptPath != "" {
		ref["transcript_path"] = *in.TranscriptPath
	}
	if in.ToolUseID != "" {
		ref["tool_use_id"] = in.ToolUseID
	}
	summary := "Codex asks to use " + in.ToolName + " in " + in.Cwd
	if in.description != "" {
		summary += ": " + in.description
	}
	if in.HookEventName == EventPreToolUse {
		// Codex takes no allow from PreToolUse: an allow only lets its own
		// approval policy go on, which may still ask.
		summary += " (before the call: Allow lets Codex's own approval policy decide)"
	}
	expiresIn := int64((wait+time.Second-1)/time.Second) + hookExpiryMargin
	return api.NewRequest{
		Kind: "permission", Title: in.Title(), Summary: truncate(summary, 2000), Detail: prettyDetail(in.ToolInput),
		Tool: in.ToolName, Command: in.command, Options: opts, Source: "session", SourceRef: ref,
		ExpiresIn: &expiresIn,
	}
}

// IdempotencyKey names this one tool call, so a retried filing answers the
// same record. PermissionRequest has no tool_use_id: the turn and a digest of
// the tool and its input stand in for it.
func (in *CodexHookInput) IdempotencyKey() string {
	call := in.ToolUseID
	if call == "" {
		sum := sha256.Sum256(append([]byte(in.ToolName+"\n"), in.ToolInput...))
		call = in.TurnID + ":" + hex.EncodeToString(sum[:12])
	}
	return "codex:" + in.HookEventName + ":" + in.SessionID + ":" + call
}

// KeyedByCall reports whether the idempotency key names exactly one tool call.
func (in *CodexHookInput) KeyedByCall() bool { return in.ToolUseID != "" }

// CodexHookOutput is the JSON the hook prints. Codex parses it strictly
// (unknown fields make it no decision), so it holds only fields Codex's
// output schemas name.
type CodexHookOutput struct {
	HookSpecificOutput any `json:"hookSpecificOutput"`
}

type codexPreToolUseOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

type codexPermissionRequestOutput struct {
	HookEventName string                         `json:"hookEventName"`
	Decision      codexPermissionRequestDecision `json:"decision"`
}

type codexPermissionRequestDecision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// CodexDecision is what a settled record means for the hook: "allow", "deny"
// or "" (no decision). It is the one place that says whether Gatehouse
// allowed: only a resolved record whose decision is an allow option counts.
// filed is the record the filing answered, so a check that the decision was
// made on what was filed belongs here too.
func CodexDecision(filed, final *api.Request) string {
	if filed == nil || final == nil || final.ID != filed.ID || final.Status != "resolved" {
		return ""
	}
	if !final.DecidedOn(filed.ActionDigest) {
		return "" // decided on another version than the one filed
	}
	switch e := final.Effect(); e {
	case "allow", "deny":
		return e
	}
	return ""
}

// Answer turns a settled record into the hook's output; nil means print
// nothing, so Codex falls back to its own prompt. PreToolUse can only deny:
// Codex refuses an allow there, so an allow prints nothing too.
func (in *CodexHookInput) Answer(filed, final *api.Request) *CodexHookOutput {
	effect := CodexDecision(filed, final)
	if effect == "" || (effect == "allow" && in.HookEventName == EventPreToolUse) {
		return nil
	}
	if in.HookEventName == EventPreToolUse {
		return &CodexHookOutput{codexPreToolUseOutput{HookEventName: EventPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: decisionReason(final, effect)}}
	}
	d := codexPermissionRequestDecision{Behavior: effect}
	if effect == "deny" {
		d.Message = decisionReason(final, effect)
	}
	return &CodexHookOutput{codexPermissionRequestOutput{HookEventName: EventPermissionRequest, Decision: d}}
}

// decisionReason is the operator's note, else who decided.
func decisionReason(r *api.Request, effect string) string {
	if r.Note != nil && strings.TrimSpace(*r.Note) != "" {
		return *r.Note
	}
	by := "the operator"
	if r.DecidedBy != nil {
		by = *r.DecidedBy
	}
	verb := map[string]string{"allow": "Allowed", "deny": "Denied"}[effect]
	return fmt.Sprintf("%s in Gatehouse by %s", verb, by)
}
