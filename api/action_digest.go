package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Action is what an operator is shown and decides on: the fields
// action_digest covers (DESIGN.md "Request record"). An empty string and a
// nil pointer are both absent and canonicalise to null.
type Action struct {
	Kind          string
	Title         string
	Summary       string
	Detail        string
	Tool          string
	Command       string
	Options       []Option
	DefaultOption string
	AllowAnswer   bool
	RuntimeID     *string
	PendingID     *string
}

type digestOption struct {
	ID     string  `json:"id"`
	Label  string  `json:"label"`
	Effect *string `json:"effect"`
}

type digestInput struct {
	Kind          *string        `json:"kind"`
	Title         *string        `json:"title"`
	Summary       *string        `json:"summary"`
	Detail        *string        `json:"detail"`
	Tool          *string        `json:"tool"`
	Command       *string        `json:"command"`
	Options       []digestOption `json:"options"`
	DefaultOption *string        `json:"default_option"`
	AllowAnswer   bool           `json:"allow_answer"`
	RuntimeID     *string        `json:"runtime_id"`
	PendingID     *string        `json:"pending_id"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptrOrNull(p *string) *string {
	if p == nil {
		return nil
	}
	return orNull(*p)
}

// ActionDigest is the hex SHA-256 of the RFC 8785 canonical JSON of a: what a
// decision is bound to. Options keep their order (it is what the operator saw).
func ActionDigest(a Action) string {
	sum := sha256.Sum256(actionCanonical(a))
	return hex.EncodeToString(sum[:])
}

// actionCanonical writes the canonical form directly (keys in sorted order,
// strings as JCS escapes them): a decision computes it inside the writer's
// turn. Invalid UTF-8, which json.Marshal would replace, takes the general
// path; a test and a fuzzer hold the two to the same bytes.
func actionCanonical(a Action) []byte {
	valid := utf8.ValidString(a.Kind) && utf8.ValidString(a.Title) && utf8.ValidString(a.Summary) &&
		utf8.ValidString(a.Detail) && utf8.ValidString(a.Tool) && utf8.ValidString(a.Command) &&
		utf8.ValidString(a.DefaultOption) && (a.RuntimeID == nil || utf8.ValidString(*a.RuntimeID)) &&
		(a.PendingID == nil || utf8.ValidString(*a.PendingID))
	for _, o := range a.Options {
		valid = valid && utf8.ValidString(o.ID) && utf8.ValidString(o.Label) && utf8.ValidString(o.Effect)
	}
	if !valid {
		return actionCanonicalJCS(a)
	}
	str := func(b []byte, s string) []byte {
		if s == "" {
			return append(b, "null"...)
		}
		return appendJCSString(b, s)
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	b := make([]byte, 0, 256+len(a.Detail)+len(a.Command)+len(a.Summary))
	b = append(b, `{"allow_answer":`...)
	b = strconv.AppendBool(b, a.AllowAnswer)
	b = append(b, `,"command":`...)
	b = str(b, a.Command)
	b = append(b, `,"default_option":`...)
	b = str(b, a.DefaultOption)
	b = append(b, `,"detail":`...)
	b = str(b, a.Detail)
	b = append(b, `,"kind":`...)
	b = str(b, a.Kind)
	b = append(b, `,"options":`...)
	if a.Options == nil {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i, o := range a.Options {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"effect":`...)
			b = str(b, o.Effect)
			b = append(b, `,"id":`...)
			b = appendJCSString(b, o.ID)
			b = append(b, `,"label":`...)
			b = appendJCSString(b, o.Label)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"pending_id":`...)
	b = str(b, deref(a.PendingID))
	b = append(b, `,"runtime_id":`...)
	b = str(b, deref(a.RuntimeID))
	b = append(b, `,"summary":`...)
	b = str(b, a.Summary)
	b = append(b, `,"title":`...)
	b = str(b, a.Title)
	b = append(b, `,"tool":`...)
	b = str(b, a.Tool)
	return append(b, '}')
}

// actionCanonicalJCS is actionCanonical by json.Marshal and the general
// canonicaliser.
func actionCanonicalJCS(a Action) []byte {
	in := digestInput{
		Kind: orNull(a.Kind), Title: orNull(a.Title), Summary: orNull(a.Summary), Detail: orNull(a.Detail),
		Tool: orNull(a.Tool), Command: orNull(a.Command), Options: make([]digestOption, len(a.Options)),
		DefaultOption: orNull(a.DefaultOption), AllowAnswer: a.AllowAnswer,
		RuntimeID: ptrOrNull(a.RuntimeID), PendingID: ptrOrNull(a.PendingID),
	}
	for i, o := range a.Options {
		in.Options[i] = digestOption{ID: o.ID, Label: o.Label, Effect: orNull(o.Effect)}
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic("api: action digest: " + err.Error()) // strings, bools and slices always marshal
	}
	c, err := jcs.Transform(b)
	if err != nil {
		panic("api: action digest: " + err.Error()) // json.Marshal output is valid JSON
	}
	return c
}

// DecidedOn reports whether r carries a decision made on exactly the action
// whose digest is filed: the only decision a client that filed it may act on.
func (r *Request) DecidedOn(filed string) bool {
	return filed != "" && r.DecidedDigest != nil && *r.DecidedDigest == filed
}

// Action is what r shows the operator now.
func (r *Request) Action() Action {
	a := Action{Kind: r.Kind, Title: r.Title, Summary: r.Summary, Detail: r.Detail, Tool: r.Tool, Command: r.Command,
		Options: r.Options, AllowAnswer: r.AllowAnswer, RuntimeID: r.RuntimeID, PendingID: r.PendingID}
	if r.DefaultOption != nil {
		a.DefaultOption = *r.DefaultOption
	}
	return a
}

// Action is what n will show the operator once filed (the server's default
// kind applied), so a filer can compute the digest of what it sent.
func (n *NewRequest) Action() Action {
	kind := n.Kind
	if kind == "" {
		kind = "approval"
	}
	return Action{Kind: kind, Title: n.Title, Summary: n.Summary, Detail: n.Detail, Tool: n.Tool, Command: n.Command,
		Options: n.Options, DefaultOption: n.DefaultOption, AllowAnswer: n.AllowAnswer, RuntimeID: n.RuntimeID}
}
