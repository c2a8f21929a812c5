package models

import "fmt"

// MaxBatch is how many decisions one batch may carry.
const MaxBatch = 100

// ECodeNotInBatch refuses, inside a batch, an option that does more than
// decide this one request: a batch never saves a rule or a standing allow.
const ECodeNotInBatch = "not_in_batch"

// onceIDs are the ids the filers Gatehouse knows give their one-time allow
// (the default options and Claude Code's "once", Codex's "accept", MCP's
// "allow"); the others that allow (Claude Code's "project" and "session",
// Codex's "accept_for_session" and "always") save something as well.
var onceIDs = []string{"once", "accept", "allow"}

// OnceOption is the option a batch may allow with: the request's only
// allowing option when it is plain (saves and remembers nothing), else its
// plain allowing option named as a one-time allow. False when there is none: a batch then may only deny.
func OnceOption(opts []Option) (Option, bool) {
	var allows []Option
	for _, o := range opts {
		if o.Effect == EffectAllow {
			allows = append(allows, o)
		}
	}
	if len(allows) == 1 && allows[0].Plain() {
		return allows[0], true
	}
	for _, id := range onceIDs {
		for _, o := range allows {
			if o.ID == id && o.Plain() {
				return o, true
			}
		}
	}
	return Option{}, false
}

// DenyOption is the first option that denies.
func DenyOption(opts []Option) (Option, bool) {
	for _, o := range opts {
		if o.Effect == EffectDeny {
			return o, true
		}
	}
	return Option{}, false
}

// CheckBatch refuses, for a decision that belongs to a batch, an option that
// says it saves or remembers something, one that allows but is not the
// request's one-time allow (it may save a rule or a scope in the runtime), and
// a request that is not what its page group asks (Decision.Group). Nil for a
// decision outside a batch, and for an option r does not offer (the usual
// decision_not_offered follows).
func (d Decision) CheckBatch(r *Request) error {
	if d.Batch == "" {
		return nil
	}
	o, ok := r.Option(d.Option)
	if !ok {
		return nil
	}
	once, hasOnce := OnceOption(r.Options)
	if !o.Plain() || (o.Effect == EffectAllow && (!hasOnce || once.ID != o.ID)) {
		return &Error{Code: ECodeNotInBatch, Detail: fmt.Sprintf("%q does more than allow this request once, and a batch never saves: decide it on its own", d.Option), Current: r}
	}
	// A version that moved is the version conflict that follows; at the
	// version shown, the request must ask what the rest of its group asks.
	if d.Group != "" && d.Version == r.Version && r.BatchDigest() != d.Group {
		return &Error{Code: ECodeNotInBatch, Detail: "it does not ask for the same action as the rest of its group: decide it on its own", Current: r}
	}
	return nil
}
