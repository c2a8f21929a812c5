package models

import "strings"

// ViaRule is the decided_via of a decision a rule took; ViaRuleWindow that of a
// hold's `then` applied when its window ended.
func ViaRule(name string) string       { return "rule:" + name }
func ViaRuleWindow(name string) string { return "rule:" + name + " (window)" }

// RuleDecided reports whether a rule took r's decision, which rule, and whether
// it was a hold's `then` at the end of its window (for "approved by rule NAME").
func (r *Request) RuleDecided() (name string, window bool, ok bool) {
	if r.DecidedVia == nil {
		return "", false, false
	}
	name, ok = strings.CutPrefix(*r.DecidedVia, "rule:")
	if !ok {
		return "", false, false
	}
	name, window = strings.CutSuffix(name, " (window)")
	return name, window, true
}
