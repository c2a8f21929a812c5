package models

// ViaRule is the decided_via of a decision a rule took; ViaRuleWindow that of a
// hold's `then` applied when its window ended.
func ViaRule(name string) string       { return "rule:" + name }
func ViaRuleWindow(name string) string { return "rule:" + name + " (window)" }
