package hookanswer

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/gatehousehq/gatehouse/api"
)

// OptionSession allows the call and adds Claude Code's suggested rule for the
// rest of the session (destination "session": kept in memory, never saved).
const OptionSession = "session"

// maxOptionLabel is the server's limit on an option label (models.validOptions).
const maxOptionLabel = 100

// ruleSuggestion is one of Claude Code's permission_suggestions that adds
// allow rules. Other kinds (setMode, addDirectories, …) widen more than the
// one rule a label can show, so no option is built from them.
type ruleSuggestion struct {
	Type        string            `json:"type"`
	Rules       []json.RawMessage `json:"rules"`
	Behavior    string            `json:"behavior"`
	Destination string            `json:"destination"`
}

// permissionRule is a rule as Claude Code writes it in settings:
// Tool(content), or Tool alone.
type permissionRule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent"`
}

func (r permissionRule) String() string {
	if r.RuleContent == "" {
		return r.ToolName
	}
	return r.ToolName + "(" + r.RuleContent + ")"
}

// settingsFile names where a project destination saves its rules.
var settingsFile = map[string]string{
	"localSettings":   ".claude/settings.local.json",
	"projectSettings": ".claude/settings.json",
}

// scope is one rule-saving option: its option, and the exact
// updatedPermissions the hook hands back when the operator picks it.
type scope struct {
	option  api.Option
	updates []json.RawMessage
}

// allowSuggestions are the input's addRules/allow suggestions, each with the
// raw bytes Claude Code sent.
func (in *ClaudeCodeHookInput) allowSuggestions() (raws []json.RawMessage, parsed []ruleSuggestion) {
	for _, raw := range in.PermissionSuggestions {
		var s ruleSuggestion
		if json.Unmarshal(raw, &s) != nil || s.Type != "addRules" || s.Behavior != "allow" || len(s.Rules) == 0 {
			continue
		}
		raws, parsed = append(raws, raw), append(parsed, s)
	}
	return raws, parsed
}

// ruleList shows rules as the operator reads them, or reports false when one
// cannot be shown exactly (no tool name, or text the server refuses).
func ruleList(rules []json.RawMessage) (string, bool) {
	var shown []string
	for _, raw := range rules {
		var r permissionRule
		if json.Unmarshal(raw, &r) != nil || r.ToolName == "" {
			return "", false
		}
		s := r.String()
		if strings.IndexFunc(s, hiddenRune) >= 0 {
			return "", false
		}
		shown = append(shown, s)
	}
	return strings.Join(shown, ", "), len(shown) > 0
}

// hiddenRune is a rune the server refuses in text (control characters and
// bidirectional overrides): a rule holding one cannot be shown on a label.
func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// sessionScope is the session-wide allow option: every rule Claude Code suggested
// to allow, handed back with destination "session", exactly as suggested.
func (in *ClaudeCodeHookInput) sessionScope() (scope, bool) {
	_, parsed := in.allowSuggestions()
	var rules []json.RawMessage
	for _, s := range parsed {
		for _, r := range s.Rules {
			if !containsRaw(rules, r) {
				rules = append(rules, r)
			}
		}
	}
	shown, ok := ruleList(rules)
	label := "Allow for this session (allows " + shown + " until the session ends)"
	if !ok || len(label) > maxOptionLabel {
		return scope{}, false
	}
	update, err := json.Marshal(ruleSuggestion{Type: "addRules", Rules: rules, Behavior: "allow", Destination: "session"})
	if err != nil {
		return scope{}, false
	}
	return scope{option: api.Option{ID: OptionSession, Label: label, Effect: "allow"}, updates: []json.RawMessage{update}}, true
}

// projectScope is "Allow for project": Claude Code's own suggestions for the
// project's settings files, handed back byte for byte.
func (in *ClaudeCodeHookInput) projectScope() (scope, bool) {
	raws, parsed := in.allowSuggestions()
	var updates []json.RawMessage
	var saves []string
	for i, s := range parsed {
		file, ok := settingsFile[s.Destination]
		if !ok {
			continue
		}
		shown, ok := ruleList(s.Rules)
		if !ok {
			return scope{}, false
		}
		updates = append(updates, raws[i])
		saves = append(saves, shown+" to "+file)
	}
	label := "Allow for project (saves " + strings.Join(saves, ", ") + ")"
	if len(updates) == 0 || len(label) > maxOptionLabel {
		return scope{}, false
	}
	return scope{option: api.Option{ID: OptionProject, Label: label, Effect: "allow"}, updates: updates}, true
}

// options are what the operator is offered: once, the scopes Claude Code's
// suggestions make possible, and deny.
func (in *ClaudeCodeHookInput) options() []api.Option {
	opts := []api.Option{{ID: OptionOnce, Label: "Allow once", Effect: "allow"}}
	if s, ok := in.sessionScope(); ok {
		opts = append(opts, s.option)
	}
	if s, ok := in.projectScope(); ok {
		opts = append(opts, s.option)
	}
	return append(opts, api.Option{ID: OptionDeny, Label: "Deny", Effect: "deny"})
}

// updatesFor is what an allow with the option saves in Claude Code: nothing
// for "once", else exactly the rules the option's label showed.
func (in *ClaudeCodeHookInput) updatesFor(option string) []json.RawMessage {
	var s scope
	var ok bool
	switch option {
	case OptionSession:
		s, ok = in.sessionScope()
	case OptionProject:
		s, ok = in.projectScope()
	}
	if !ok {
		return nil
	}
	return s.updates
}

// filedAs reports whether r's decision was made on exactly what the hook
// filed: its decided_digest is the digest of the hook's own filing. An edit
// (or a record that is another call's) moves the digest, so an operator's
// decision counts only for the prompt, options and labels the hook wrote.
func (in *ClaudeCodeHookInput) filedAs(r *api.Request) bool {
	n := in.NewRequest(0)
	return r.DecidedOn(api.ActionDigest(n.AsFiled(r)))
}

func containsRaw(list []json.RawMessage, r json.RawMessage) bool {
	for _, x := range list {
		if bytes.Equal(x, r) {
			return true
		}
	}
	return false
}
