package api

import (
	"strconv"
	"unicode/utf8"
)

// actionCanonicalDirect writes the action digest's canonical JSON of r
// straight from its fields, in RFC 8785's member order, as
// actionCanonicalByExclusion (the definition: the record marshalled, the
// server-assigned members dropped, the rest canonicalised) makes it, without
// marshalling, re-reading and sorting. ok is false for a record it does not
// write the same way (a string that is not valid UTF-8, which marshalling
// replaces; a source_ref name outside ASCII, whose order RFC 8785 takes from
// UTF-16; a required count past 2^53): the definition then runs.
// TestActionCanonicalDirect and FuzzActionCanonical hold the two to the same
// bytes, and TestActionDigest fails on a member the writer leaves out.
func actionCanonicalDirect(r *Request) (b []byte, ok bool) {
	w := canonWriter{b: make([]byte, 0, 512), ok: true}
	w.raw(`{"allow_answer":`)
	w.bool(r.AllowAnswer)
	if a := r.Approvals; a != nil {
		w.raw(`,"approvals":{`)
		if len(a.Escalate) > 0 {
			w.raw(`"escalate":[`)
			for i, s := range a.Escalate {
				if i > 0 {
					w.raw(",")
				}
				w.raw(`{"after":`)
				w.str(s.After)
				if s.Then != "" {
					w.raw(`,"then":`)
					w.str(s.Then)
				}
				if s.To != nil {
					w.raw(`,"to":{"groups":`)
					w.strs(s.To.Groups)
					w.raw("}")
				}
				w.raw("}")
			}
			w.raw("],")
		}
		w.raw(`"groups":`)
		w.strs(a.Groups)
		w.raw(`,"note":`)
		w.strPtr(a.Note)
		w.raw(`,"required":`)
		const maxExact = 1 << 53
		if a.Required > maxExact || a.Required < -maxExact {
			return nil, false
		}
		w.b = strconv.AppendInt(w.b, int64(a.Required), 10)
		w.raw("}")
	}
	if r.Command != "" {
		w.raw(`,"command":`)
		w.str(r.Command)
	}
	w.raw(`,"default_option":`)
	w.strPtr(r.DefaultOption)
	w.raw(`,"detail":`)
	w.str(r.Detail)
	w.raw(`,"kind":`)
	w.str(r.Kind)
	w.raw(`,"options":`)
	if r.Options == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i, o := range r.Options {
			if i > 0 {
				w.raw(",")
			}
			w.raw("{")
			if o.Effect != "" {
				w.raw(`"effect":`)
				w.str(o.Effect)
				w.raw(",")
			}
			w.raw(`"id":`)
			w.str(o.ID)
			w.raw(`,"label":`)
			w.str(o.Label)
			if o.Remember != nil {
				w.raw(`,"remember":{"for":`)
				w.str(o.Remember.For)
				w.raw(`,"scope":`)
				w.str(o.Remember.Scope)
				w.raw("}")
			}
			if o.Saves != "" {
				w.raw(`,"saves":`)
				w.str(o.Saves)
			}
			w.raw("}")
		}
		w.raw("]")
	}
	if r.PendingID != nil {
		w.raw(`,"pending_id":`)
		w.str(*r.PendingID)
	}
	w.raw(`,"risk":`)
	w.strPtr(r.Risk)
	w.raw(`,"runtime_id":`)
	w.strPtr(r.RuntimeID)
	w.raw(`,"sealed":`)
	w.bool(r.Sealed)
	w.raw(`,"source":`)
	w.str(r.Source)
	w.raw(`,"source_ref":`)
	w.refs(r.SourceRef)
	w.raw(`,"summary":`)
	w.str(r.Summary)
	w.raw(`,"title":`)
	w.str(r.Title)
	if r.Tool != "" {
		w.raw(`,"tool":`)
		w.str(r.Tool)
	}
	w.raw("}")
	return w.b, w.ok
}

// canonWriter appends RFC 8785 JSON; ok turns false at a value it cannot
// write as the general canonicaliser would.
type canonWriter struct {
	b  []byte
	ok bool
}

func (w *canonWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *canonWriter) bool(v bool) {
	if v {
		w.raw("true")
	} else {
		w.raw("false")
	}
}

func (w *canonWriter) str(s string) {
	if !utf8.ValidString(s) {
		w.ok = false
	}
	w.b = appendJCSString(w.b, s)
}

func (w *canonWriter) strPtr(s *string) {
	if s == nil {
		w.raw("null")
		return
	}
	w.str(*s)
}

func (w *canonWriter) strs(ss []string) {
	if ss == nil {
		w.raw("null")
		return
	}
	w.raw("[")
	for i, s := range ss {
		if i > 0 {
			w.raw(",")
		}
		w.str(s)
	}
	w.raw("]")
}

// refs writes a source_ref: its names in byte order, which is RFC 8785's
// (UTF-16) order for ASCII names.
func (w *canonWriter) refs(m map[string]string) {
	if m == nil {
		w.raw("null")
		return
	}
	var inline [8]string
	keys := inline[:0]
	for k := range m {
		for i := 0; i < len(k); i++ {
			if k[i] >= utf8.RuneSelf {
				w.ok = false
			}
		}
		keys = append(keys, k)
	}
	// An insertion sort: a source_ref holds a handful of names.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	w.raw("{")
	for i, k := range keys {
		if i > 0 {
			w.raw(",")
		}
		w.str(k)
		w.raw(":")
		w.str(m[k])
	}
	w.raw("}")
}
