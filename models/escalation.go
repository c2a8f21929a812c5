package models

import (
	"slices"
	"strconv"
	"time"
)

// Escalation limits: a policy escalates in at most MaxEscalationSteps steps,
// each at least a second and at most a week after filing.
const (
	MaxEscalationSteps = 4
	MaxEscalationAfter = 7 * 24 * time.Hour
)

// What the last escalation step may do when nobody has decided.
const (
	ThenDefault = "default" // decide the default option (one that allows is never taken: then it halts)
	ThenHalt    = "halt"    // deny, telling the agent to stop and wait for a person
)

// ViaEscalation is the decided_via of a decision the last escalation step took.
const ViaEscalation = "escalation"

// HaltNote is the note a halt answers the agent with.
const HaltNote = "No one has decided this request in time. Stop here and wait for a person: " +
	"do not retry it, rephrase it or work around it; ask the operator directly."

// EscalationStep is one step of a policy's escalation: After the filing,
// either To widens who may approve (and notifies them), or Then ends it.
type EscalationStep struct {
	After string        `json:"after" yaml:"after"`
	To    *EscalationTo `json:"to,omitempty" yaml:"to"`
	Then  string        `json:"then,omitempty" yaml:"then"`
}

// EscalationTo names the groups an escalation step adds.
type EscalationTo struct {
	Groups []string `json:"groups" yaml:"groups"`
}

// Delay is the step's After as a duration (it was validated on the way in).
func (s EscalationStep) Delay() time.Duration {
	d, _ := time.ParseDuration(s.After)
	return d
}

// Escalated is one step as it fired: server-assigned, kept on the request.
type Escalated struct {
	Step   int       `json:"step"` // 1-based
	At     time.Time `json:"at"`
	Groups []string  `json:"groups,omitempty"` // a `to` step: who became approvers
	Then   string    `json:"then,omitempty"`   // the last step: default or halt
	// Why it fired: "due" (its time came) or "away" (every eligible approver
	// was away).
	Why string `json:"why"`
	// Outcome of a `then` step: the option decided, or "" when it could not
	// halt (no option denies) and the request stays open.
	Option string `json:"option,omitempty"`
}

// Reasons a step fires.
const (
	EscalatedDue  = "due"
	EscalatedAway = "away"
)

// validateEscalate checks a policy's steps: at most a few, After strictly
// increasing, exactly one of to and then per step, then only on the last.
func validateEscalate(where string, steps []EscalationStep) error {
	if len(steps) > MaxEscalationSteps {
		return Errorf(ECodeInvalid, "%s has %d steps; at most %d", where, len(steps), MaxEscalationSteps)
	}
	var prev time.Duration
	for i, s := range steps {
		at := where + "[" + strconv.Itoa(i) + "]"
		d, err := time.ParseDuration(s.After)
		if err != nil || d < time.Second || d > MaxEscalationAfter {
			return Errorf(ECodeInvalid, "%s.after %q must be a duration like 10m, from 1s to 168h", at, s.After)
		}
		if d <= prev {
			return Errorf(ECodeInvalid, "%s.after %s must come after the step before (%s)", at, s.After, steps[i-1].After)
		}
		prev = d
		switch {
		case s.To != nil && s.Then != "":
			return Errorf(ECodeInvalid, "%s has both to and then: a step does one", at)
		case s.To == nil && s.Then == "":
			return Errorf(ECodeInvalid, "%s needs to: {groups: [...]} or then: default|halt", at)
		case s.Then != "" && i != len(steps)-1:
			return Errorf(ECodeInvalid, "%s.then belongs on the last step only", at)
		case s.Then != "" && s.Then != ThenDefault && s.Then != ThenHalt:
			return Errorf(ECodeInvalid, "%s.then %q must be default or halt", at, s.Then)
		}
		if s.To != nil {
			if len(s.To.Groups) == 0 {
				return Errorf(ECodeInvalid, "%s.to.groups must name at least one group", at)
			}
			for j, g := range s.To.Groups {
				if !NamePattern.MatchString(g) {
					return Errorf(ECodeInvalid, "%s.to.groups[%d] %q must match %s", at, j, g, NamePattern)
				}
				if slices.Contains(s.To.Groups[:j], g) {
					return Errorf(ECodeInvalid, "%s.to.groups[%d] %q is repeated", at, j, g)
				}
			}
		}
	}
	return nil
}

// EligibleGroups is who may approve r now: the policy's groups widened by
// every `to` step that has fired. Empty means any operator.
func (r *Request) EligibleGroups() []string {
	if r.Approvers == nil {
		return nil
	}
	g := r.Approvers.Groups
	if len(g) == 0 {
		return nil
	}
	for _, e := range r.Escalations {
		for _, add := range e.Groups {
			if !slices.Contains(g, add) {
				g = append(slices.Clip(g), add)
			}
		}
	}
	return g
}

// NextEscalation is the step that fires next (0-based) and when it is due;
// ok false when none is left.
func (r *Request) NextEscalation() (i int, due time.Time, ok bool) {
	if r.Approvers == nil || r.EscalationStep >= len(r.Approvers.Escalate) {
		return 0, time.Time{}, false
	}
	i = r.EscalationStep
	return i, r.CreatedAt.Add(r.Approvers.Escalate[i].Delay()), true
}

// HaltOption is the option a halt decides: the default when it denies, else
// the first option that denies; ok false when no option denies.
func HaltOption(options []Option, def string) (string, bool) {
	for _, o := range options {
		if o.ID == def && o.Effect == EffectDeny {
			return o.ID, true
		}
	}
	for _, o := range options {
		if o.Effect == EffectDeny {
			return o.ID, true
		}
	}
	return "", false
}

// EndOption is what an escalation's last step decides on r: for `default`,
// the default option unless it allows (under a policy only people allow) —
// then, and for `halt`, HaltOption. halt says whether the agent gets the
// halt note; ok false when there is nothing to decide.
func EndOption(r *Request, then string) (option string, halt, ok bool) {
	if then == ThenDefault && r.DefaultOption != "" {
		if o, found := r.Option(r.DefaultOption); found && o.Effect != EffectAllow {
			return o.ID, false, true
		}
	}
	option, ok = HaltOption(r.Options, r.DefaultOption)
	return option, true, ok
}

// checkEscalationEnd refuses a filer's policy whose last step could decide
// nothing on these options: a halt needs an option that denies.
func checkEscalationEnd(a *Approvers, options []Option, def string) error {
	if a == nil || len(a.Escalate) == 0 {
		return nil
	}
	last := a.Escalate[len(a.Escalate)-1]
	if last.Then == "" {
		return nil
	}
	r := &Request{Options: options, DefaultOption: def}
	if _, _, ok := EndOption(r, last.Then); !ok {
		return Errorf(ECodeInvalid, "approvers.escalate: then %s would halt, and a halt needs an option whose effect is deny", last.Then)
	}
	return nil
}
