package models

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// Limits on the fields rules match on.
const (
	MaxTool    = 128 // the column's size
	MaxCommand = 32 * 1024
	MaxRefs    = 16   // source_ref entries
	MaxRef     = 4096 // bytes in a source_ref key or value (paths: cwd, transcript_path)
)

// checkText refuses text that could show the operator something other than
// what it holds: invalid UTF-8, control
// characters (C0, DEL and C1; newline and tab only where multiline) and the
// bidirectional embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069), with which "\u202eyneD" renders as "Deny". The error names the
// field and the character.
func checkText(field, s string, multiline bool) error {
	if !utf8.ValidString(s) {
		return Errorf(ECodeInvalid, "%s is not valid UTF-8", field)
	}
	for i, r := range s {
		if why := badRune(r, multiline); why != "" {
			return Errorf(ECodeInvalid, "%s contains %s (U+%04X) at byte %d", field, why, r, i)
		}
	}
	return nil
}

func badRune(r rune, multiline bool) string {
	switch {
	case (r == '\n' || r == '\t') && multiline:
		return ""
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return "a control character"
	case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return "a bidirectional override"
	}
	return ""
}

// textField is one field to check.
type textField struct {
	name      string
	value     string
	multiline bool
}

func checkTexts(fields ...textField) error {
	for _, f := range fields {
		if err := checkText(f.name, f.value, f.multiline); err != nil {
			return err
		}
	}
	return nil
}

// validateFiling checks the fields of a filing that ValidateContent (shared
// with edits) does not: tool, command, source_ref, runtime_id and pending_id.
func (n *NewRequest) validateFiling() error {
	if len(n.Tool) > MaxTool {
		return Errorf(ECodeInvalid, "tool is longer than %d bytes", MaxTool)
	}
	if len(n.Command) > MaxCommand {
		return Errorf(ECodeInvalid, "command is longer than %d bytes", MaxCommand)
	}
	if len(n.SourceRef) > MaxRefs {
		return Errorf(ECodeInvalid, "source_ref has more than %d entries", MaxRefs)
	}
	fields := []textField{{"tool", n.Tool, false}, {"command", n.Command, true}}
	keys := make([]string, 0, len(n.SourceRef))
	for k := range n.SourceRef {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first bad entry is the same on every try
	for _, k := range keys {
		v := n.SourceRef[k]
		if len(k) > MaxRef || len(v) > MaxRef {
			return Errorf(ECodeInvalid, "source_ref[%q] is longer than %d bytes", k, MaxRef)
		}
		fields = append(fields, textField{"source_ref key", k, false}, textField{fmt.Sprintf("source_ref[%q]", k), v, false})
	}
	if n.RuntimeID != nil {
		fields = append(fields, textField{"runtime_id", *n.RuntimeID, false})
	}
	if n.PendingID != nil {
		fields = append(fields, textField{"pending_id", *n.PendingID, false})
	}
	return checkTexts(fields...)
}

// contentTexts are the fields of what the operator reads, filed or edited.
func contentTexts(title, summary, detail string, options []Option) error {
	fields := []textField{{"title", title, false}, {"summary", summary, true}, {"detail", detail, true}}
	for i, o := range options {
		fields = append(fields, textField{fmt.Sprintf("options[%d].id", i), o.ID, false},
			textField{fmt.Sprintf("options[%d].label", i), o.Label, false},
			textField{fmt.Sprintf("options[%d].effect", i), o.Effect, false},
			textField{fmt.Sprintf("options[%d].saves", i), o.Saves, false})
	}
	return checkTexts(fields...)
}

// Validate checks what a decider sends besides the option: the lengths and the
// text of answer and note (both may hold newlines and tabs).
func (d Decision) Validate() error {
	if d.Answer != nil {
		if len(*d.Answer) > MaxAnswer {
			return Errorf(ECodeInvalid, "answer is longer than %d bytes", MaxAnswer)
		}
		if err := checkText("answer", *d.Answer, true); err != nil {
			return err
		}
	}
	if d.Note != nil {
		if len(*d.Note) > MaxNote {
			return Errorf(ECodeInvalid, "note is longer than %d bytes", MaxNote)
		}
		if err := checkText("note", *d.Note, true); err != nil {
			return err
		}
	}
	return checkText("option", d.Option, false)
}
