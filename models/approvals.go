package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
)

// NoteRequired is the one value Approvers.Note takes besides "".
const NoteRequired = "required"

// MaxRequired bounds how many votes a policy may ask for.
const MaxRequired = 20

// Approvers is a request's approval policy (DESIGN.md "Who may approve"): who
// may vote, how many matching votes resolve it, whether a vote needs a note.
type Approvers struct {
	Groups   []string `json:"groups"`
	Required int      `json:"required"`
	Note     string   `json:"note,omitempty"`
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

// Value implements driver.Valuer.
func (v Votes) Value() (driver.Value, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// Scan implements sql.Scanner.
func (v *Votes) Scan(src any) error { return scanJSON(src, v) }

// Value implements driver.Valuer.
func (a *Approvers) Value() (driver.Value, error) {
	if a == nil {
		return nil, nil
	}
	b, err := json.Marshal(a)
	return string(b), err
}

// Scan implements sql.Scanner.
func (a *Approvers) Scan(src any) error { return scanJSON(src, a) }

func scanJSON(src, dst any) error {
	switch s := src.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(s), dst)
	case []byte:
		return json.Unmarshal(s, dst)
	}
	return fmt.Errorf("cannot read %T as JSON", src)
}

// Validate checks a policy as a filer or a rule writes it; where names the
// field in messages.
func (a *Approvers) Validate(where string) error {
	if a.Required < 1 || a.Required > MaxRequired {
		return Errorf(ECodeInvalid, "%s.required must be 1 to %d", where, MaxRequired)
	}
	for i, g := range a.Groups {
		if !namePattern.MatchString(g) {
			return Errorf(ECodeInvalid, "%s.groups[%d] %q must match %s", where, i, g, namePattern)
		}
	}
	if a.Note != "" && a.Note != NoteRequired {
		return Errorf(ECodeInvalid, "%s.note must be %q or absent", where, NoteRequired)
	}
	return nil
}

// stricter combines the rules' policy with the filer's: the filer may only ask
// for more votes, narrower groups or a note, never less than the rule.
func stricter(rule, filer *Approvers) (*Approvers, error) {
	if filer == nil {
		return rule, nil
	}
	if rule == nil {
		return filer, nil
	}
	out := &Approvers{Groups: rule.Groups, Required: max(rule.Required, filer.Required), Note: rule.Note}
	if filer.Note == NoteRequired {
		out.Note = NoteRequired
	}
	if len(filer.Groups) > 0 {
		for _, g := range filer.Groups {
			if len(rule.Groups) > 0 && !slices.Contains(rule.Groups, g) {
				return nil, Errorf(ECodeInvalid, "approvers.groups may only narrow the rules' groups %v; %q is not one of them", rule.Groups, g)
			}
		}
		out.Groups = filer.Groups
	}
	return out, nil
}

// mayVote says why voter may not vote on r ("" when it may): the checks of
// DESIGN.md "Who may approve", in the order a voter should hear them. The
// page uses it to disable buttons with the reason.
func (r *Request) mayVote(voter Principal) *Error {
	a := r.Approvers
	if a == nil {
		return nil
	}
	if voter.Role != RoleOperator {
		return Errorf(ECodeNotApprover, "only operators vote")
	}
	if len(a.Groups) > 0 && !slices.ContainsFunc(voter.Groups, func(g string) bool { return slices.Contains(a.Groups, g) }) {
		return Errorf(ECodeNotApprover, "%s is not in %v, who approve this request", voter.Name, a.Groups)
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

// WhyNotVote is mayVote for callers outside the package: the reason in words,
// "" when voter may vote.
func (r *Request) WhyNotVote(voter Principal) string {
	if e := r.mayVote(voter); e != nil {
		return e.Detail
	}
	return ""
}

// VotesFor counts the standing votes for one option.
func (r *Request) VotesFor(option string) int { return countFor(r.Votes, option, r.ActionDigest()) }

// vote records d as a vote on r (open, at the version d saw, d.Voter eligible)
// in tx. A deny vote, or the required-th vote for one option, resolves r;
// otherwise r stays open at a higher version. Either way the update is
// conditional on r's version, so of two votes on one version only one counts.
func (s *Store) vote(tx *gorm.DB, r *Request, d Decision) error {
	now := s.now()
	digest := r.ActionDigest() // checkDecision held d.Version to r's: this is what the voter saw
	votes := append(slices.Clone(r.Votes), Vote{By: d.By, Decision: d.Option, Note: d.Note, At: now, Digest: digest})
	standing := countFor(votes, d.Option, digest)
	detail := map[string]any{"decision": d.Option, "votes": standing, "required": r.Approvers.Required, "digest": digest}
	if d.Note != nil {
		detail["note"] = *d.Note
	}
	o, _ := r.Option(d.Option)
	if o.Effect == EffectDeny || standing >= r.Approvers.Required {
		if err := s.audit(tx, r, "vote", d.By, d.Via, detail); err != nil {
			return err
		}
		r.Votes = votes
		return s.resolve(tx, r, d, "decide")
	}
	res := tx.Model(&Request{}).Where("id = ? AND version = ? AND status = ?", r.ID, r.Version, StatusOpen).
		Updates(map[string]any{"version": r.Version + 1, "votes": Votes(votes), "updated_at": now})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return s.lostRace(tx, r.ID)
	}
	r.Version, r.Votes, r.UpdatedAt = r.Version+1, votes, now
	return s.audit(tx, r, "vote", d.By, d.Via, detail)
}

// countFor counts the votes for option cast on digest: a vote on an earlier
// version approved text that may no longer be the text that runs.
func countFor(votes []Vote, option, digest string) int {
	n := 0
	for _, v := range votes {
		if v.Decision == option && v.Digest == digest {
			n++
		}
	}
	return n
}
