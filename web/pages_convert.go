package web

import (
	"sort"
	"strings"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
)

// toCard is a stored request as the page shows it.
func toCard(r *models.Request, viewer models.Principal) views.Card {
	c := views.Card{
		ID: r.ID, Kind: r.Kind, Status: r.Status, Version: r.Version, Risk: r.Risk, Title: r.Title,
		Summary: r.Summary, Tool: r.Tool, Command: r.Command, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, AllowAnswer: r.AllowAnswer,
		Options:   make([]views.Option, len(r.Options)),
		Actuation: views.Actuation{State: r.ActuationState, Attempts: r.Attempts},
		Session:   r.SourceRef["session"],
	}
	for i, o := range r.Options {
		c.Options[i] = views.Option(o)
	}
	if r.ResolvedAt != nil {
		c.ResolvedAt = *r.ResolvedAt
	}
	if r.Held() {
		c.Held, c.HoldRule, c.HoldThen = true, deref(r.HoldRule), deref(r.HoldThen)
		c.HoldUntil = *r.HoldUntil
	}
	c.Decision, c.Answer, c.Note = deref(r.Decision), deref(r.Answer), deref(r.Note)
	c.DecidedBy, c.DecidedVia = deref(r.DecidedBy), deref(r.DecidedVia)
	if a := r.Approvers; a != nil {
		c.Approvals = &views.Approvals{Required: a.Required, Groups: a.Groups, Votes: make([]views.Vote, len(r.Votes))}
		for i, v := range r.Votes {
			label := v.Decision
			if o, ok := r.Option(v.Decision); ok {
				label = o.Label
			}
			c.Approvals.Votes[i] = views.Vote{By: strings.TrimPrefix(v.By, models.RoleOperator+":"), Option: label}
		}
		if r.Open() {
			c.NoVote = r.WhyNotVote(viewer)
		}
	}
	return c
}

func toCards(rs []models.Request, viewer models.Principal) []views.Card {
	out := make([]views.Card, len(rs))
	for i := range rs {
		out[i] = toCard(&rs[i], viewer)
	}
	return out
}

func toAuditRows(rows []models.Audit) []views.AuditRow {
	out := make([]views.AuditRow, len(rows))
	for i, a := range rows {
		out[i] = views.AuditRow{At: a.CreatedAt, Version: a.Version, Action: a.Action, Actor: a.Actor, Via: a.Via, Detail: a.Detail}
	}
	return out
}

// sortedRef lists source_ref in key order, so the page reads the same each time.
func sortedRef(m map[string]string) []views.KV {
	out := make([]views.KV, 0, len(m))
	for k, v := range m {
		out = append(out, views.KV{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
