package models

import (
	"slices"
	"time"
)

// NoteRequired is the one value Approvers.Note takes besides "".
const NoteRequired = "required"

// MaxRequired bounds how many votes a policy may ask for.
const MaxRequired = 20

// Approvers is a request's approval policy: who
// may vote, how many matching votes resolve it, whether a vote needs a note.
type Approvers struct {
	Groups   []string `json:"groups"`
	Required int      `json:"required"`
	Note     string   `json:"note,omitempty"`
	// Escalate widens who may approve as time passes and may end undecided
	// requests (escalation.go); part of the policy, so in the action digest.
	Escalate []EscalationStep `json:"escalate,omitempty"`
}

// Vote is one operator's decide on a request with a policy, bound to the
// action digest of the version it was cast on: it counts only while that is
// the request's digest, so an edit voids every vote before it.
type Vote struct {
	By       string    `json:"by"` // "operator:name"
	Decision string    `json:"decision"`
	Note     *string   `json:"note"`
	At       time.Time `json:"at"`
	Digest   string    `json:"digest"`
}

// Votes is stored as one JSON column on the request row, so a vote and the
// version it raises commit in the same conditional update: two replicas cannot
// both count on the same version.
type Votes []Vote

// Validate checks a policy as a filer or a rule writes it; where names the
// field in messages.
func (a *Approvers) Validate(where string) error {
	if a.Required < 1 || a.Required > MaxRequired {
		return Errorf(ECodeInvalid, "%s.required must be 1 to %d", where, MaxRequired)
	}
	for i, g := range a.Groups {
		if !NamePattern.MatchString(g) {
			return Errorf(ECodeInvalid, "%s.groups[%d] %q must match %s", where, i, g, NamePattern)
		}
	}
	if a.Note != "" && a.Note != NoteRequired {
		return Errorf(ECodeInvalid, "%s.note must be %q or absent", where, NoteRequired)
	}
	return validateEscalate(where+".escalate", a.Escalate)
}

// Stricter combines the rules' policy with the filer's: the filer may only ask
// for more votes, narrower groups (not where the rules escalate) or a note,
// never less than the rule.
func Stricter(rule, filer *Approvers) (*Approvers, error) {
	if filer == nil {
		return rule, nil
	}
	if rule == nil {
		return filer, nil
	}
	out := &Approvers{Groups: rule.Groups, Required: max(rule.Required, filer.Required), Note: rule.Note, Escalate: rule.Escalate}
	if len(filer.Escalate) > 0 {
		// An escalation widens who approves and may end the request: a filer
		// may add one only where the rules set none, and only to their groups.
		if len(rule.Escalate) > 0 {
			return nil, Errorf(ECodeInvalid, "approvers.escalate: the rules' policy sets the escalation; leave it out")
		}
		for _, s := range filer.Escalate {
			if s.To == nil {
				continue
			}
			for _, g := range s.To.Groups {
				if len(rule.Groups) > 0 && !slices.Contains(rule.Groups, g) {
					return nil, Errorf(ECodeInvalid, "approvers.escalate may only reach the rules' groups %v; %q is not one of them", rule.Groups, g)
				}
			}
		}
		out.Escalate = filer.Escalate
	}
	if filer.Note == NoteRequired {
		out.Note = NoteRequired
	}
	if len(filer.Groups) > 0 {
		if len(rule.Escalate) > 0 && slices.ContainsFunc(rule.Groups, func(g string) bool { return !slices.Contains(filer.Groups, g) }) {
			// Narrowed to a group that is empty or away, the rules' chain
			// would fire at once and bring in, before its time, a group the
			// rules admit only later: the agent would pick its approvers.
			return nil, Errorf(ECodeInvalid, "approvers.groups may not narrow the rules' groups %v: the rules' policy escalates, so it says who approves and when", rule.Groups)
		}
		for _, g := range filer.Groups {
			if len(rule.Groups) > 0 && !slices.Contains(rule.Groups, g) {
				return nil, Errorf(ECodeInvalid, "approvers.groups may only narrow the rules' groups %v; %q is not one of them", rule.Groups, g)
			}
		}
		out.Groups = filer.Groups
	}
	return out, nil
}

// MayVote says why voter may not vote on r (nil when it may): only operators
// vote, only from the policy's groups, never the person the request was filed
// for, and once each; checked in the order a voter should hear them. The page
// uses it to disable buttons with the reason.
func (r *Request) MayVote(voter Principal) *Error {
	a := r.Approvers
	if a == nil {
		return nil
	}
	if voter.Role != RoleOperator {
		return Errorf(ECodeNotApprover, "only operators vote")
	}
	if groups := r.EligibleGroups(); len(groups) > 0 && !slices.ContainsFunc(voter.Groups, func(g string) bool { return slices.Contains(groups, g) }) {
		return Errorf(ECodeNotApprover, "%s is not in %v, who approve this request", voter.Name, groups)
	}
	if r.FiledFor != "" && r.FiledFor == voter.Name {
		return Errorf(ECodeSelfApproval, "this request was filed on behalf of %s, who may not approve it", voter.Name)
	}
	label, digest := voter.Label(), r.ActionDigest()
	if slices.ContainsFunc(r.Votes, func(v Vote) bool { return v.By == label && v.Digest == digest }) {
		return Errorf(ECodeAlreadyVoted, "%s has already voted on this request", voter.Name)
	}
	return nil
}

// MayChoose says why voter may not vote for option on r (nil when it may).
// A policy, the filer's or a rule's, narrows who may approve, never who may
// refuse: a vote for an option whose effect is deny needs only an operator,
// whatever their groups, whoever the request was filed for (refusing is
// always safe) and whatever they voted before; it resolves the request at
// once. Any other option needs MayVote.
func (r *Request) MayChoose(voter Principal, option string) *Error {
	if o, ok := r.Option(option); ok && o.Effect == EffectDeny && voter.Role == RoleOperator {
		return nil
	}
	return r.MayVote(voter)
}

// WhyNotVote is MayVote: the reason in words,
// "" when voter may vote.
func (r *Request) WhyNotVote(voter Principal) string {
	if e := r.MayVote(voter); e != nil {
		return e.Detail
	}
	return ""
}

// VotesFor counts the standing votes for one option: those cast on the
// request's current digest.
func (r *Request) VotesFor(option string) int { return CountVotes(r.Votes, option, r.ActionDigest()) }

// CountVotes counts the votes for option cast on digest: a vote on an earlier
// version approved text that may no longer be the text that runs.
func CountVotes(votes []Vote, option, digest string) int {
	n := 0
	for _, v := range votes {
		if v.Decision == option && v.Digest == digest {
			n++
		}
	}
	return n
}
