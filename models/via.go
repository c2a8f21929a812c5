package models

// ViaRule is the decided_via of a decision a rule took; ViaRuleWindow that of a
// hold's `then` applied when its window ended.
func ViaRule(name string) string       { return "rule:" + name }
func ViaRuleWindow(name string) string { return "rule:" + name + " (window)" }

// Ways a waiting item (a session's "who is waiting for me") is settled without
// an operator: the session showed it moved on (a new prompt, a tool call, a
// decided permission), it ended, or it did not move for a day.
const (
	ViaMovedOn = "moved_on"
	ViaEnded   = "ended"
	ViaRetired = "retired"
)
