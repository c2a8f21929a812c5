package api

import "time"

// EscalationStep is one step of an approval policy's escalation
// (docs/escalation.md): After the filing ("10m"), To adds groups of approvers
// (and notifies them), or Then ("default" or "halt") ends an undecided request.
// Then belongs on the last step only.
type EscalationStep struct {
	After string        `json:"after"`
	To    *EscalationTo `json:"to,omitempty"`
	Then  string        `json:"then,omitempty"`
}

// EscalationTo names the groups a step adds.
type EscalationTo struct {
	Groups []string `json:"groups"`
}

// Escalation is how a request's escalation has gone so far: server-assigned,
// so outside the action digest. Step counts the steps fired; NextAt is when
// the next is due (null when none is left or the request is no longer open).
type Escalation struct {
	Step   int         `json:"step"`
	NextAt *time.Time  `json:"next_at"`
	Fired  []Escalated `json:"fired"`
}

// Escalated is one fired step: Why is "due" (its time came) or "away" (every
// eligible approver was away); a `to` step names the Groups it added, the last
// step its Then and the Option it decided ("" when it could not halt).
type Escalated struct {
	Step   int       `json:"step"`
	At     time.Time `json:"at"`
	Groups []string  `json:"groups,omitempty"`
	Then   string    `json:"then,omitempty"`
	Why    string    `json:"why"`
	Option string    `json:"option,omitempty"`
}

// Availability is an operator's away state and quiet hours, at
// GET /v1/me/availability, PUT /v1/me/away and PUT|DELETE /v1/me/quiet-hours.
// Away and InQuietHours are as of the answer.
type Availability struct {
	Operator     string      `json:"operator"`
	Away         bool        `json:"away"`
	AwayUntil    *time.Time  `json:"away_until"`
	QuietHours   *QuietHours `json:"quiet_hours"`
	InQuietHours bool        `json:"in_quiet_hours"`
}

// Away is the body of PUT /v1/me/away: away or back, and optionally until
// when (RFC 3339; away only).
type Away struct {
	Away  *bool      `json:"away"`
	Until *time.Time `json:"until,omitempty"`
}

// QuietHours is a daily span with no push, "22:00" to "07:00" (crossing
// midnight when start is after end), in an IANA time zone.
type QuietHours struct {
	Start string `json:"start"`
	End   string `json:"end"`
	TZ    string `json:"tz"`
}
