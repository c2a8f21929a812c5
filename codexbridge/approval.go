package codexbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gatehousehq/gatehouse/api"
)

// The approval server-requests Codex's app-server sends its client
// (codex app-server generate-json-schema: ServerRequest.json).
const (
	MethodCommandApproval     = "item/commandExecution/requestApproval"
	MethodFileChangeApproval  = "item/fileChange/requestApproval"
	MethodPermissionsApproval = "item/permissions/requestApproval"
)

// Option ids the bridge offers, one per Codex decision.
const (
	OptionAccept           = "accept"
	OptionAcceptForSession = "accept_for_session"
	OptionAlways           = "always"
	OptionDecline          = "decline"
	OptionCancel           = "cancel"
)

// approvalParams is what the bridge reads of the three approval requests'
// params (CommandExecutionRequestApprovalParams, FileChangeRequestApprovalParams,
// PermissionsRequestApprovalParams); the rest is kept only in the detail.
type approvalParams struct {
	ThreadID           string            `json:"threadId"`
	TurnID             string            `json:"turnId"`
	ItemID             string            `json:"itemId"`
	Reason             *string           `json:"reason"`
	Command            *string           `json:"command"`
	Cwd                *string           `json:"cwd"`
	CommandActions     []commandAction   `json:"commandActions"`
	AvailableDecisions []json.RawMessage `json:"availableDecisions"`
	GrantRoot          *string           `json:"grantRoot"`
	Permissions        json.RawMessage   `json:"permissions"`
}

type commandAction struct {
	Command string `json:"command"`
}

// approval is one approval server-request as filed: the request Gatehouse
// shows and, per option id, the result the bridge sends Codex for it.
type approval struct {
	method  string
	params  approvalParams
	request api.NewRequest
	results map[string]json.RawMessage
}

// Limits the server enforces (models.MaxTitle, MaxSummary, MaxDetail, option labels).
const (
	maxTitle   = 200
	maxSummary = 2000
	maxDetail  = 32 * 1024
	maxLabel   = 100
)

// parseApproval reads an approval server-request's params. ok is false for
// any other method; an error means params the bridge cannot file, and the
// local client alone answers.
func parseApproval(method string, raw json.RawMessage) (*approval, bool, error) {
	switch method {
	case MethodCommandApproval, MethodFileChangeApproval, MethodPermissionsApproval:
	default:
		return nil, false, nil
	}
	a := &approval{method: method, results: map[string]json.RawMessage{}}
	if err := json.Unmarshal(raw, &a.params); err != nil {
		return nil, true, fmt.Errorf("%s params: %w", method, err)
	}
	p := &a.params
	if p.ThreadID == "" || p.ItemID == "" {
		return nil, true, fmt.Errorf("%s params lack threadId or itemId", method)
	}
	var opts []api.Option
	var err error
	switch method {
	case MethodCommandApproval:
		opts, err = a.commandOptions()
	case MethodFileChangeApproval:
		opts = a.plainOptions([]string{"accept", "acceptForSession", "decline", "cancel"})
	case MethodPermissionsApproval:
		opts, err = a.permissionOptions()
	}
	if err != nil {
		return nil, true, err
	}
	if len(opts) == 0 {
		return nil, true, fmt.Errorf("%s offers no decision the bridge knows", method)
	}
	a.request = a.newRequest(raw, opts)
	return a, true, nil
}

// commandOptions are the offered availableDecisions, each answered with the
// very element Codex offered. Without the list, the decisions every command
// approval takes (accept, decline, cancel) stand in; a decision the bridge
// cannot put in words (a network policy amendment) is left to the local client.
func (a *approval) commandOptions() ([]api.Option, error) {
	offered := a.params.AvailableDecisions
	if offered == nil {
		return a.plainOptions([]string{"accept", "decline", "cancel"}), nil
	}
	var opts []api.Option
	for _, d := range offered {
		var name string
		if json.Unmarshal(d, &name) == nil {
			opts = append(opts, a.plainOptions([]string{name})...)
			continue
		}
		var amend struct {
			Accept *struct {
				Amendment []string `json:"execpolicy_amendment"`
			} `json:"acceptWithExecpolicyAmendment"`
		}
		if json.Unmarshal(d, &amend) != nil || amend.Accept == nil || len(amend.Accept.Amendment) == 0 {
			continue
		}
		prefix := strings.Join(amend.Accept.Amendment, " ")
		opts = append(opts, api.Option{ID: OptionAlways, Label: truncate("Always allow commands starting `"+prefix+"`", maxLabel), Effect: "allow"})
		a.results[OptionAlways] = decisionResult(d)
	}
	return opts, nil
}

// plainOptions maps Codex's plain decision names to options.
func (a *approval) plainOptions(names []string) []api.Option {
	var opts []api.Option
	for _, n := range names {
		o, ok := plainOption[n]
		if !ok {
			continue
		}
		b, _ := json.Marshal(n)
		a.results[o.ID] = decisionResult(b)
		opts = append(opts, o)
	}
	return opts
}

var plainOption = map[string]api.Option{
	"accept":           {ID: OptionAccept, Label: "Allow once", Effect: "allow"},
	"acceptForSession": {ID: OptionAcceptForSession, Label: "Allow for this session", Effect: "allow"},
	"decline":          {ID: OptionDecline, Label: "Deny", Effect: "deny"},
	"cancel":           {ID: OptionCancel, Label: "Stop the turn", Effect: "deny"},
}

// permissionOptions: a permissions request is answered with the permissions
// granted and their scope (PermissionsRequestApprovalResponse), so "Allow
// once" grants what was asked for this turn, "Allow for this session" for the
// session, and "Deny" grants nothing.
func (a *approval) permissionOptions() ([]api.Option, error) {
	asked := a.params.Permissions
	if len(asked) == 0 || asked[0] != '{' {
		return nil, fmt.Errorf("%s params have no permissions object", a.method)
	}
	grant := func(perms json.RawMessage, scope string) json.RawMessage {
		b, _ := json.Marshal(struct {
			Permissions json.RawMessage `json:"permissions"`
			Scope       string          `json:"scope"`
		}{perms, scope})
		return b
	}
	a.results[OptionAccept] = grant(asked, "turn")
	a.results[OptionAcceptForSession] = grant(asked, "session")
	a.results[OptionDecline] = grant(json.RawMessage(`{}`), "turn")
	return []api.Option{
		{ID: OptionAccept, Label: "Allow for this turn", Effect: "allow"},
		{ID: OptionAcceptForSession, Label: "Allow for this session", Effect: "allow"},
		{ID: OptionDecline, Label: "Deny", Effect: "deny"},
	}, nil
}

func decisionResult(decision json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteString(`{"decision":`)
	_ = json.Compact(&buf, decision)
	buf.WriteString(`}`)
	return buf.Bytes()
}

// newRequest is the sealed permission request filed for the approval; text
// the operator reads is written here from what Codex will do, not by the model.
func (a *approval) newRequest(raw json.RawMessage, opts []api.Option) api.NewRequest {
	p := &a.params
	ref := map[string]string{"session": p.ThreadID, "turn": p.TurnID, "item": p.ItemID}
	where := ""
	if p.Cwd != nil && *p.Cwd != "" {
		ref["cwd"] = *p.Cwd
		where = " in " + *p.Cwd
	}
	n := api.NewRequest{Kind: "permission", Options: opts, Source: "session", SourceRef: ref}
	switch a.method {
	case MethodCommandApproval:
		n.Tool = "Bash"
		if p.Command != nil {
			n.Command = *p.Command
		}
		shown := n.Command
		if len(p.CommandActions) == 1 && p.CommandActions[0].Command != "" {
			shown = p.CommandActions[0].Command
		}
		n.Title = "Run: " + strings.Join(strings.Fields(shown), " ")
		n.Summary = "Codex asks to run a command" + where
	case MethodFileChangeApproval:
		n.Tool = "Edit"
		n.Title = "Change files"
		n.Summary = "Codex asks to change files" + where
		if p.GrantRoot != nil && *p.GrantRoot != "" {
			n.Command = *p.GrantRoot
			n.Title = "Write under " + *p.GrantRoot + " for the session"
		}
	case MethodPermissionsApproval:
		n.Tool = "Permissions"
		n.Title = "Grant Codex more permissions"
		n.Summary = "Codex asks for more sandbox permissions" + where
	}
	if p.Reason != nil && *p.Reason != "" {
		n.Summary += ": " + *p.Reason
	}
	for _, o := range opts {
		if o.ID == OptionAlways {
			n.Summary += ". \"Always allow\" saves a Codex exec-policy rule for every command with that prefix"
		}
	}
	n.Title, n.Summary = truncate(n.Title, maxTitle), truncate(n.Summary, maxSummary)
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") == nil {
		n.Detail = truncate(buf.String(), maxDetail)
	}
	return n
}

// idempotencyKey names this approval: an item asks once per method.
func (a *approval) idempotencyKey() string {
	return "codex-app-server:" + a.method + ":" + a.params.ThreadID + ":" + a.params.TurnID + ":" + a.params.ItemID
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
