package api

import "time"

// Approvers is an approval policy (docs/approvers.md): only
// operators in one of Groups (any operator when empty) may decide, Required
// distinct votes for one option resolve, and Note "required" makes every vote
// carry a note. On filing it may only make the rules' policy stricter.
type Approvers struct {
	Groups   []string `json:"groups,omitempty"`
	Required int      `json:"required"`
	Note     string   `json:"note,omitempty"`
	// Escalate: notify more approvers, then end, as time passes undecided.
	Escalate []EscalationStep `json:"escalate,omitempty"`
}

// Approvals is a record's policy and the votes cast under it; absent from a
// record without a policy, where any one operator decides.
type Approvals struct {
	Groups   []string `json:"groups"`
	Required int      `json:"required"`
	Note     *string  `json:"note"`
	// Escalate is the policy's escalation (its state is the record's escalation).
	Escalate []EscalationStep `json:"escalate,omitempty"`
	Votes    []Vote           `json:"votes"`
}

// Vote is one operator's decide under a policy, bound to the action digest of
// the version it was cast on. A vote whose digest is no longer the record's
// (an edit came after it) is Void: it is shown, and it counts for nothing.
type Vote struct {
	By       string    `json:"by"`
	Decision string    `json:"decision"`
	Note     *string   `json:"note"`
	At       time.Time `json:"at"`
	Digest   string    `json:"digest"`
	Void     bool      `json:"void,omitempty"`
}
