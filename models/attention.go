package models

// Attention levels: how a kind of request reaches the operator.
const (
	// LevelInterrupt pushes an alert at once (presence-aware).
	LevelInterrupt = "interrupt"
	// LevelBadge is counted on the page, the tab title and the app badge, and
	// pushed only if still open after the attention grace, once per session
	// per grace.
	LevelBadge = "badge"
	// LevelSilent shows on the page only.
	LevelSilent = "silent"
)

// AttentionLevel is the level of a request of kind whose source_ref is ref:
// approval, question, permission and failure interrupt; a session's waiting
// item and a review are a badge; a waiting item of no session (an agent's
// notify_operator) and a setup item are silent.
func AttentionLevel(kind string, ref map[string]string) string {
	switch {
	case Interrupting(kind):
		return LevelInterrupt
	case kind == KindWaiting && ref["session"] != "", kind == KindReview:
		return LevelBadge
	}
	return LevelSilent
}
