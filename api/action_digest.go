package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// serverAssigned are the record's members the server writes and nobody files
// or edits: who and when, the state of the decision, and the digests
// themselves. Everything else a record carries — what the operator reads, what
// a rule or a policy matches, what a client acts on — is in the action digest,
// so a member added to Request later is covered unless it is listed here.
var serverAssigned = []string{
	"id", "status", "version", "decision", "answer", "note", "created_by",
	"created_at", "updated_at", "expires_at", "resolved_at", "decided_by",
	"decided_via", "actuation", "hold", "edited_at", "action_digest", "decided_digest",
	"escalation", "grant_id", "review",
}

// ActionDigest is the hex SHA-256 of the RFC 8785 canonical JSON of r as the
// API shows it, less the server-assigned members and the votes: what a
// decision or a vote is bound to. It moves with every edit.
func ActionDigest(r *Request) string {
	sum := sha256.Sum256(actionCanonical(r))
	return hex.EncodeToString(sum[:])
}

// callRefs are the source_ref members that name one call, turn or session of
// an agent rather than what it asks to do: Claude Code's session,
// transcript_path and tool_use_id, Codex's turn, the Codex bridge's item, an
// ACP tool_call. Two filings of the same action differ only there (and in
// their ids and times).
var callRefs = []string{"session", "transcript_path", "tool_use_id", "turn", "item", "tool_call"}

// BatchDigest is the action digest of r with the members that name the call
// left out of source_ref (callRefs): requests whose batch digests agree ask
// for the same action, up to their ids and times, and only those may share
// one "allow all". Everything else the action digest covers (title, summary,
// detail, command, working directory, options, risk, runtime, policy) must
// agree.
func BatchDigest(r *Request) string {
	c := *r
	c.SourceRef = make(map[string]string, len(r.SourceRef))
	for k, v := range r.SourceRef {
		if !slices.Contains(callRefs, k) {
			c.SourceRef[k] = v
		}
	}
	return ActionDigest(&c)
}

// v1Semantics marshals as encoding/json does (the digest was defined over its
// output; TestActionDigestGolden holds it), with fewer allocations.
var v1Semantics = jsonv1.DefaultOptionsV1()

// actionCanonical is the canonical JSON the action digest hashes: the direct
// writer's, or the definition's where the writer declines.
func actionCanonical(r *Request) []byte {
	if b, ok := actionCanonicalDirect(r); ok {
		return b
	}
	return actionCanonicalByExclusion(r)
}

// actionCanonicalByExclusion is the definition of the action digest's
// canonical JSON: r marshalled, less the server-assigned members, canonicalised.
func actionCanonicalByExclusion(r *Request) []byte {
	b, err := jsonv2.Marshal(r, v1Semantics)
	if err != nil {
		panic("api: action digest: " + err.Error()) // a Request always marshals
	}
	// Copy the record's members less the excluded ones (a stream, not a map:
	// a decision computes this), then canonicalise the whole object (RFC 8785
	// sorts the members and fixes each value's form).
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true)) // our own output: checking names again is a sixth of the cost
	out := make([]byte, 0, len(b))
	out = append(out, '{')
	if _, err := dec.ReadToken(); err != nil { // the record's {
		panic("api: action digest: " + err.Error())
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			panic("api: action digest: " + err.Error())
		}
		name := tok.String() // before the next read voids the token
		v, err := dec.ReadValue()
		if err != nil {
			panic("api: action digest: " + err.Error())
		}
		if slices.Contains(serverAssigned, name) {
			continue
		}
		if name == "approvals" && r.Approvals != nil {
			// The policy (escalation steps included) is what the deciders must
			// meet; the votes are its state.
			v, _ = jsonv2.Marshal(struct {
				Groups   []string         `json:"groups"`
				Required int              `json:"required"`
				Note     *string          `json:"note"`
				Escalate []EscalationStep `json:"escalate,omitempty"`
			}{r.Approvals.Groups, r.Approvals.Required, r.Approvals.Note, r.Approvals.Escalate}, v1Semantics)
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, name) // member names are ASCII field tags
		out = append(out, ':')
		out = append(out, v...)
	}
	out = append(out, '}')
	c := jsontext.Value(out)
	if err := c.Canonicalize(); err != nil {
		panic("api: action digest: " + err.Error()) // json.Marshal output is valid JSON
	}
	return c
}

// DecidedOn reports whether r carries a decision made on exactly the action
// whose digest is filed: the only decision a client that filed it may act on.
func (r *Request) DecidedOn(filed string) bool {
	return filed != "" && r.DecidedDigest != nil && *r.DecidedDigest == filed
}

// AsFiled is the record n files, as far as its action digest goes: the
// server's defaults applied, and the approval policy the server answered
// (a rule may require approvers the filer did not name).
func (n *NewRequest) AsFiled(answered *Request) *Request {
	r := &Request{
		Kind: n.Kind, Title: n.Title, Summary: n.Summary, Detail: n.Detail, Tool: n.Tool, Command: n.Command,
		Options: n.Options, AllowAnswer: n.AllowAnswer, Source: n.Source, SourceRef: n.SourceRef,
		RuntimeID: n.RuntimeID, Sealed: n.Sealed == nil || *n.Sealed,
	}
	if r.Kind == "" {
		r.Kind = "approval"
	}
	if r.Source == "" {
		r.Source = "session"
	}
	if n.Risk != "" {
		risk := n.Risk
		r.Risk = &risk
	}
	if r.Options == nil {
		r.Options = []Option{}
	}
	if r.SourceRef == nil {
		r.SourceRef = map[string]string{}
	}
	if n.DefaultOption != "" {
		d := n.DefaultOption
		r.DefaultOption = &d
	}
	if answered != nil {
		r.Approvals = answered.Approvals
	}
	return r
}

// FiledAs reports whether answered is the record n filed: its action digest is
// the digest of n. A client that acts on a decision checks this at filing and
// DecidedOn at the end, so a record someone else filed or edited never counts.
func (n *NewRequest) FiledAs(answered *Request) bool {
	return answered != nil && answered.ActionDigest != "" && answered.ActionDigest == ActionDigest(n.AsFiled(answered))
}

// ActionJSON is the canonical JSON the action digest hashes: the record less
// its server-assigned members and votes. The advisory reviewer reads exactly
// this, so it weighs what a decision is bound to.
func ActionJSON(r *Request) []byte { return actionCanonical(r) }
