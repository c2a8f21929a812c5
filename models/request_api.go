package models

import (
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// API is the record as the API shows it, with its action digest: the one
// conversion every surface (REST, MCP, the page, forwards) and the digest use,
// so what is hashed is what is shown.
//
// A decided record's digest is its decided_digest: a decision is written on
// the condition of the version whose digest it stores, and once a request is
// settled nothing the digest covers changes (only its actuation, which the
// digest leaves out). Taking it from there spares every answer about a
// decision (the decide's, each woken waiter's, a forward's) hashing the record
// again; TestDecidedDigestIsTheActionDigest holds the two equal.
func (r *Request) API() api.Request {
	out := r.record()
	if r.DecidedDigest != nil && !r.Open() {
		out.ActionDigest = *r.DecidedDigest
	} else {
		out.ActionDigest = api.ActionDigest(&out)
	}
	if out.Approvals != nil {
		for i := range out.Approvals.Votes {
			v := &out.Approvals.Votes[i]
			v.Void = v.Digest != out.ActionDigest
		}
	}
	return out
}

// ActionDigest is the digest of what the record shows now (api.ActionDigest).
func (r *Request) ActionDigest() string {
	out := r.record()
	return api.ActionDigest(&out)
}

// BatchDigest is the digest a batch groups by (api.BatchDigest): the action
// digest up to the ids of the call.
func (r *Request) BatchDigest() string {
	out := r.record()
	return api.BatchDigest(&out)
}

func (r *Request) record() api.Request {
	out := api.Request{
		ID: r.ID, Kind: r.Kind, Status: r.Status, Version: r.Version, Title: r.Title, Summary: r.Summary,
		Detail: r.Detail, Risk: nilIfEmpty(r.Risk), Tool: r.Tool, Command: r.Command, Options: make([]api.Option, len(r.Options)),
		AllowAnswer: r.AllowAnswer, Decision: r.Decision, Answer: r.Answer, Note: r.Note, Source: r.Source,
		SourceRef: r.SourceRef, RuntimeID: r.RuntimeID, PendingID: r.PendingID, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(),
		DecidedBy: r.DecidedBy, DecidedVia: r.DecidedVia,
		Actuation: api.Actuation{State: r.ActuationState, Attempts: r.Attempts},
		Sealed:    r.Sealed, DecidedDigest: r.DecidedDigest, GrantID: r.GrantID,
	}
	if r.EditedAt != nil {
		out.EditedAt = utcPtr(*r.EditedAt)
	}
	for i, o := range r.Options {
		out.Options[i] = api.Option(o)
	}
	if r.DefaultOption != "" {
		d := r.DefaultOption
		out.DefaultOption = &d
	}
	if r.SourceRef == nil {
		out.SourceRef = map[string]string{}
	}
	if r.ResolvedAt != nil {
		out.ResolvedAt = utcPtr(*r.ResolvedAt)
	}
	if r.Held() {
		out.Hold = &api.Hold{Rule: *r.HoldRule, Until: r.HoldUntil.UTC(), Then: *r.HoldThen}
	}
	if out.Actuation.State == "" {
		out.Actuation.State = ActuationNone
	}
	out.Approvals = r.approvals()
	out.Escalation = r.escalation()
	if r.Review != nil {
		v := api.Review(*r.Review)
		v.At = v.At.UTC()
		out.Review = &v
	}
	return out
}

// escalation is the state of the policy's escalation; nil without one.
func (r *Request) escalation() *api.Escalation {
	if r.Approvers == nil || len(r.Approvers.Escalate) == 0 {
		return nil
	}
	out := &api.Escalation{Step: r.EscalationStep, Fired: make([]api.Escalated, len(r.Escalations))}
	if _, due, ok := r.NextEscalation(); ok && r.Open() {
		out.NextAt = utcPtr(due)
	}
	for i, e := range r.Escalations {
		out.Fired[i] = api.Escalated{Step: e.Step, At: e.At.UTC(), Groups: e.Groups, Then: e.Then, Why: e.Why, Option: e.Option}
	}
	return out
}

// EscalateToAPI and EscalateFromAPI convert a policy's steps between the wire
// and the domain (the same shape).
func EscalateToAPI(steps []EscalationStep) []api.EscalationStep {
	if len(steps) == 0 {
		return nil
	}
	out := make([]api.EscalationStep, len(steps))
	for i, s := range steps {
		out[i] = api.EscalationStep{After: s.After, Then: s.Then}
		if s.To != nil {
			out[i].To = &api.EscalationTo{Groups: s.To.Groups}
		}
	}
	return out
}

// EscalateFromAPI is EscalateToAPI's inverse.
func EscalateFromAPI(steps []api.EscalationStep) []EscalationStep {
	if len(steps) == 0 {
		return nil
	}
	out := make([]EscalationStep, len(steps))
	for i, s := range steps {
		out[i] = EscalationStep{After: s.After, Then: s.Then}
		if s.To != nil {
			out[i].To = &EscalationTo{Groups: s.To.Groups}
		}
	}
	return out
}

// approvals is the policy and its votes (API marks void a vote cast on
// another version's digest: an edit came after it).
func (r *Request) approvals() *api.Approvals {
	a := r.Approvers
	if a == nil {
		return nil
	}
	out := &api.Approvals{Groups: a.Groups, Required: a.Required, Escalate: EscalateToAPI(a.Escalate), Votes: make([]api.Vote, len(r.Votes))}
	if out.Groups == nil {
		out.Groups = []string{}
	}
	if a.Note != "" {
		n := a.Note
		out.Note = &n
	}
	for i, v := range r.Votes {
		out.Votes[i] = api.Vote{By: v.By, Decision: v.Decision, Note: v.Note, At: v.At.UTC(), Digest: v.Digest}
	}
	return out
}

func utcPtr(t time.Time) *time.Time {
	t = t.UTC()
	return &t
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
