package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gatehousehq/gatehouse/api"
	"mvdan.cc/sh/v3/syntax"
)

// ACP permission option kinds (PermissionOptionKind).
const (
	KindAllowOnce    = "allow_once"
	KindAllowAlways  = "allow_always"
	KindRejectOnce   = "reject_once"
	KindRejectAlways = "reject_always"
)

// PermissionParams is what the bridge reads of session/request_permission's
// params; the rest reaches Gatehouse only in the detail.
type PermissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCall           `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

// ToolCall is the tool call a permission request is about (ToolCallUpdate).
type ToolCall struct {
	ToolCallID string            `json:"toolCallId"`
	Title      string            `json:"title"`
	Kind       string            `json:"kind"`
	Status     string            `json:"status"`
	Content    []json.RawMessage `json:"content"`
	Locations  []struct {
		Path string `json:"path"`
		Line *int   `json:"line"`
	} `json:"locations"`
	RawInput json.RawMessage `json:"rawInput"`
}

// PermissionOption is one choice the agent offers.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// Who is who asks: the agent and the editor (from initialize) and where the
// session works (from session/new).
type Who struct {
	Agent, AgentVersion   string
	Editor, EditorVersion string
	Cwd                   string
}

// Permission is one permission request as filed: the request Gatehouse shows
// and, per Gatehouse option id, the agent's option id it answers with.
type Permission struct {
	Params  PermissionParams
	Request api.NewRequest
	// AgentOption maps each filed option id to the agent's optionId.
	AgentOption map[string]string
	// Reject is the agent's option the bridge answers when it must not allow
	// (a timeout, Gatehouse down): reject_once, else reject_always; "" for none.
	Reject string
}

// Limits the server enforces (models.MaxTitle, MaxSummary, MaxDetail, option
// labels, source_ref values).
const (
	maxTitle   = 200
	maxSummary = 2000
	maxDetail  = 32 * 1024
	maxLabel   = 100
	maxRef     = 4096
)

// ParsePermission reads session/request_permission's params and builds the
// filing. An error means params the bridge cannot file: the editor alone
// answers (or, headless, the agent gets its reject option).
func ParsePermission(raw json.RawMessage, who Who) (*Permission, error) {
	p := &Permission{AgentOption: map[string]string{}}
	if err := json.Unmarshal(raw, &p.Params); err != nil {
		return nil, fmt.Errorf("session/request_permission params: %w", err)
	}
	if p.Params.SessionID == "" || p.Params.ToolCall.ToolCallID == "" {
		return p, errors.New("session/request_permission lacks sessionId or toolCall.toolCallId")
	}
	p.Reject = rejectOption(p.Params.Options)
	opts := p.options(who)
	if len(opts) == 0 {
		return p, errors.New("session/request_permission offers no option of a known kind")
	}
	p.Request = p.newRequest(raw, who, opts)
	return p, nil
}

// options maps the agent's options to Gatehouse options by kind: allow_once
// allows, reject_* denies, and allow_always allows and is remembered in
// Gatehouse for the agent's session (a grant the operator sees on the card
// and can revoke), so the agent itself is answered its allow_once and keeps
// no silent promise. allow_always is offered only when both hold: the agent
// also offers allow_once (its allow_always is never answered: it would be a
// standing rule inside the agent that Gatehouse cannot see or revoke), and
// the tool call's command fully determines it (rememberable); otherwise the
// operator's allow is Allow once, and an agent with no allow_once can only
// be refused. The ids are the kinds (agents' own ids, such as Codex's
// "approved-execpolicy-amendment", are not valid Gatehouse ids); an option
// of an unknown kind is not offered. This is the one place that says what an
// option means in Gatehouse.
func (p *Permission) options(who Who) []api.Option {
	remember := p.Params.ToolCall.rememberable(who) && slices.ContainsFunc(p.Params.Options, func(o PermissionOption) bool {
		return o.Kind == KindAllowOnce
	})
	var opts []api.Option
	for _, o := range p.Params.Options {
		opt := api.Option{ID: o.Kind, Label: label(o)}
		switch o.Kind {
		case KindAllowOnce:
			opt.Effect = "allow"
		case KindAllowAlways:
			if !remember {
				continue
			}
			opt.Effect = "allow"
			opt.Remember = &api.RememberOffer{Scope: "session", For: "until_revoked"}
		case KindRejectOnce, KindRejectAlways:
			opt.Effect = "deny"
		default:
			continue
		}
		if _, dup := p.AgentOption[opt.ID]; dup {
			continue // one option per kind: the first the agent listed
		}
		p.AgentOption[opt.ID] = o.OptionID
		opts = append(opts, opt)
	}
	if remember {
		p.AgentOption[KindAllowAlways] = p.AgentOption[KindAllowOnce] // Gatehouse remembers; the agent allows once
	}
	return opts
}

// incidental are rawInput members that do not change what a command does:
// the model's words for it, the agent's ids and times for the call, and what
// the agent derived from the command or offers about it (Codex).
var incidental = map[string]bool{
	"description": true, "justification": true, "reason": true,
	"call_id": true, "turn_id": true, "started_at_ms": true,
	"parsed_cmd": true, "proposed_execpolicy_amendment": true, "available_decisions": true,
}

// rememberable reports whether a remembered allow of the tool call's
// command would cover only calls that do exactly what the operator saw: a
// command (execute) taken from rawInput's command or cmd, every other member
// of rawInput incidental, and its own cwd, if any, the session's. A title
// (Gemini CLI sends no rawInput), a path (what is written to it is not in
// the command) or arguments beside the command never are.
func (t *ToolCall) rememberable(who Who) bool {
	var in map[string]json.RawMessage
	if t.Kind != "execute" || len(t.RawInput) == 0 || t.RawInput[0] != '{' || json.Unmarshal(t.RawInput, &in) != nil {
		return false
	}
	from := ""
	for _, k := range []string{"command", "cmd"} {
		if _, ok := in[k]; ok {
			from = k
			break
		}
	}
	if from == "" || commandOf(in[from]) == "" || commandOf(in[from]) != t.Command() {
		return false
	}
	for k, v := range in {
		switch {
		case k == from || incidental[k]:
		case k == "cwd":
			var cwd string
			if json.Unmarshal(v, &cwd) != nil || cwd != who.Cwd {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// label is the agent's name for the option, else words for its kind.
func label(o PermissionOption) string {
	if n := oneLine(o.Name); n != "" {
		return truncate(n, maxLabel)
	}
	return map[string]string{KindAllowOnce: "Allow once", KindAllowAlways: "Always allow",
		KindRejectOnce: "Reject", KindRejectAlways: "Always reject"}[o.Kind]
}

// rejectOption is the agent's option to answer when the bridge must not
// allow: reject_once, else reject_always.
func rejectOption(opts []PermissionOption) string {
	for _, kind := range []string{KindRejectOnce, KindRejectAlways} {
		for _, o := range opts {
			if o.Kind == kind {
				return o.OptionID
			}
		}
	}
	return ""
}

// kindWord is the tool call's kind as the card says it.
func kindWord(kind string) string {
	if kind == "" {
		return "other"
	}
	return kind
}

// verbs title a request by the tool call's kind (ToolKind).
var verbs = map[string]string{
	"read": "Read", "edit": "Edit", "delete": "Delete", "move": "Move", "search": "Search",
	"execute": "Run", "think": "Think", "fetch": "Fetch", "switch_mode": "Switch mode",
}

// Command is what the tool call acts on: rawInput's command (an argv, as
// Codex sends it, joined shell-quoted; a shell's `-c`/`-lc` wrapper is the
// script it runs), else a path or URL in rawInput, else the tool call's
// title (Gemini CLI sends no rawInput).
func (t *ToolCall) Command() string {
	var in map[string]json.RawMessage
	if len(t.RawInput) > 0 && t.RawInput[0] == '{' && json.Unmarshal(t.RawInput, &in) == nil {
		for _, k := range []string{"command", "cmd", "file_path", "path", "notebook_path", "url", "pattern", "query"} {
			if c := commandOf(in[k]); c != "" {
				return c
			}
		}
	}
	return t.Title
}

// commandOf is one rawInput member as a command line: a string as it is, an
// argv as the shell line it runs; "" for anything else.
func commandOf(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil && s != "" {
		return s
	}
	var argv []string
	if json.Unmarshal(v, &argv) == nil && len(argv) > 0 {
		if script, ok := shellScript(argv); ok {
			return script
		}
		if line, ok := shellJoin(argv); ok {
			return line
		}
	}
	return ""
}

// shellScript is the script of an argv that only hands it to a shell
// (["/bin/bash", "-lc", "git push"], as Codex runs every command): what
// runs is the script, so the card, the rules and a remembered allow read
// that, not a wrapper that hides it.
func shellScript(argv []string) (string, bool) {
	if len(argv) != 3 || (argv[1] != "-c" && argv[1] != "-lc") {
		return "", false
	}
	switch argv[0] {
	case "bash", "/bin/bash", "/usr/bin/bash", "sh", "/bin/sh", "/usr/bin/sh", "zsh", "/bin/zsh", "/usr/bin/zsh":
		return argv[2], true
	}
	return "", false
}

// shellJoin joins an argv as a shell would read it back.
func shellJoin(argv []string) (string, bool) {
	words := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", false
		}
		words[i] = q
	}
	return strings.Join(words, " "), true
}

// cwd is the tool call's own working directory (Codex's rawInput.cwd).
func (t *ToolCall) cwd() string {
	var in struct {
		Cwd string `json:"cwd"`
	}
	if len(t.RawInput) > 0 && t.RawInput[0] == '{' {
		_ = json.Unmarshal(t.RawInput, &in)
	}
	return in.Cwd
}

// newRequest is the sealed permission request filed for the tool call. The
// title is written here from the kind and the command.
func (p *Permission) newRequest(raw json.RawMessage, who Who, opts []api.Option) api.NewRequest {
	tc := &p.Params.ToolCall
	cmd := tc.Command()
	cwd := tc.cwd()
	if cwd == "" {
		cwd = who.Cwd
	}
	ref := map[string]string{"session": p.Params.SessionID, "tool_call": tc.ToolCallID, "tool_kind": kindWord(tc.Kind)}
	set := func(k, v string) {
		if v != "" {
			ref[k] = truncate(clean(v), maxRef)
		}
	}
	set("cwd", cwd)
	set("agent", who.Agent)
	set("agent_version", who.AgentVersion)
	set("editor", who.Editor)
	set("editor_version", who.EditorVersion)

	verb := verbs[tc.Kind]
	if verb == "" {
		verb = "Use a tool"
	}
	shown := oneLine(cmd)
	title := verb
	if shown != "" {
		title += ": " + shown
	}
	agent := who.Agent
	if agent == "" {
		agent = "An ACP agent"
	}
	summary := agent + " asks to " + strings.ToLower(verb)
	if t := oneLine(tc.Title); t != "" && t != shown {
		summary += " (" + t + ")"
	}
	if cwd != "" {
		summary += " in " + clean(cwd)
	}
	if who.Editor != "" {
		summary += ", from " + clean(who.Editor)
	}
	n := api.NewRequest{
		Kind: "permission", Title: truncate(title, maxTitle), Summary: truncate(summary, maxSummary),
		Detail: truncate(detail(tc, raw), maxDetail), Tool: toolName(tc.Kind), Command: cmd,
		Options: opts, Source: "session", SourceRef: ref,
	}
	return n
}

// toolName is what rules match as the tool: a command is a shell line.
func toolName(kind string) string {
	if kind == "execute" {
		return "shell"
	}
	return kindWord(kind)
}

// detail is the tool call's text content and locations, then its params as
// the agent sent them.
func detail(tc *ToolCall, raw json.RawMessage) string {
	var b strings.Builder
	for _, c := range tc.Content {
		var item struct {
			Type    string `json:"type"`
			Path    string `json:"path"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(c, &item) != nil {
			continue
		}
		switch {
		case item.Type == "content" && item.Content.Type == "text":
			b.WriteString(item.Content.Text + "\n")
		case item.Type == "diff":
			b.WriteString("diff of " + item.Path + "\n")
		}
	}
	for _, l := range tc.Locations {
		if l.Line != nil {
			fmt.Fprintf(&b, "at %s:%d\n", l.Path, *l.Line)
		} else {
			b.WriteString("at " + l.Path + "\n")
		}
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") == nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(buf.String())
	}
	return cleanMultiline(b.String())
}

// clean replaces what the server refuses in one-line text (control and bidi
// characters, invalid UTF-8) with U+FFFD; the command is never cleaned: a
// command the server refuses is not filed.
func clean(s string) string { return replaceBad(s, false) }

// oneLine is s on one line, whitespace runs as single spaces, cleaned.
func oneLine(s string) string { return clean(strings.Join(strings.Fields(s), " ")) }

func cleanMultiline(s string) string { return replaceBad(s, true) }

func replaceBad(s string, multiline bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case (r == '\n' || r == '\t') && multiline:
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f),
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			return '\uFFFD'
		}
		return r
	}, s)
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
