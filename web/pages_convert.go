package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/views"
)

// toCard is a stored request as the page shows it.
func toCard(r *models.Request, viewer models.Principal) views.Card {
	c := views.Card{
		ID: r.ID, Kind: r.Kind, Status: r.Status, Version: r.Version, Risk: r.Risk, Title: r.Title,
		Summary: r.Summary, Tool: r.Tool, Command: r.Command, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, AllowAnswer: r.AllowAnswer, DefaultOption: r.DefaultOption,
		Options:   make([]views.Option, len(r.Options)),
		Actuation: views.Actuation{State: r.ActuationState, Attempts: r.Attempts},
		Session:   r.SourceRef["session"], Cwd: r.SourceRef["cwd"],
		Edited: r.EditedAt != nil,
	}
	for i, o := range r.Options {
		c.Options[i] = views.Option{ID: o.ID, Label: o.Label, Effect: o.Effect, Saves: o.Saves}
	}
	rememberCard(r, &c)
	if r.ResolvedAt != nil {
		c.ResolvedAt = *r.ResolvedAt
	}
	if r.PendingID != nil {
		c.Exact = r.Detail // Gatehouse wrote it from the grant's validated fields
	}
	if r.Kind == models.KindWaiting && r.SourceRef["session"] != "" {
		c.LastMessage = r.Detail // what the session said last: what an answer answers
	}
	if r.Held() {
		c.Held, c.HoldRule, c.HoldThen = true, deref(r.HoldRule), deref(r.HoldThen)
		c.HoldUntil = *r.HoldUntil
	}
	c.Decision, c.Answer, c.Note = deref(r.Decision), deref(r.Answer), deref(r.Note)
	if v := r.Review; v != nil && v.Current(r) {
		c.Review = &views.CardReview{Status: v.Status, Risk: v.Risk, Authorised: v.Authorised, Rationale: v.Rationale, Model: v.Model}
	}
	c.DecidedBy, c.DecidedVia = deref(r.DecidedBy), deref(r.DecidedVia)
	if a := r.Approvers; a != nil {
		c.Approvals = &views.Approvals{Required: a.Required, Groups: a.Groups, Votes: make([]views.Vote, len(r.Votes))}
		digest := r.ActionDigest()
		for i, v := range r.Votes {
			label := v.Decision
			if o, ok := r.Option(v.Decision); ok {
				label = o.Label
			}
			c.Approvals.Votes[i] = views.Vote{By: strings.TrimPrefix(v.By, models.RoleOperator+":"), Option: label, Void: v.Digest != digest}
		}
		if r.Open() {
			c.NoVote = r.WhyNotVote(viewer)
		}
		c.Approvals.Escalated, c.Approvals.Next = toEscalations(r)
	}
	batchCard(&c, r)
	return c
}

// toEscalations is what a card says of r's escalation: each fired step and
// the one to come.
func toEscalations(r *models.Request) ([]views.Escalation, *views.Escalation) {
	var fired []views.Escalation
	for _, e := range r.Escalations {
		v := views.Escalation{At: e.At, Groups: e.Groups, Then: e.Then, Away: e.Why == models.EscalatedAway}
		if e.Option != "" {
			v.Option = e.Option
			if o, ok := r.Option(e.Option); ok {
				v.Option = o.Label
			}
			v.Halted = r.Note != nil && *r.Note == models.HaltNote
		}
		fired = append(fired, v)
	}
	i, at, ok := r.NextEscalation()
	if !ok || !r.Open() {
		return fired, nil
	}
	step := r.Approvers.Escalate[i]
	next := &views.Escalation{At: at, Then: step.Then}
	if step.To != nil {
		next.Groups = step.To.Groups
	}
	return fired, next
}

// runtimeReader is what the cards need to name a request's runtime.
type runtimeReader interface {
	GetRuntime(ctx context.Context, id string) (*models.Runtime, error)
}

// cardsOf converts requests and names the runtime and machine of each that
// names one, reading each runtime once.
func cardsOf(ctx context.Context, rt runtimeReader, viewer models.Principal, rs ...*models.Request) []views.Card {
	out := make([]views.Card, len(rs))
	seen := map[string]*models.Runtime{}
	for i, r := range rs {
		out[i] = toCard(r, viewer)
		if r.RuntimeID == nil || rt == nil {
			continue
		}
		id := *r.RuntimeID
		m, ok := seen[id]
		if !ok {
			var err error
			if m, err = rt.GetRuntime(ctx, id); err != nil {
				// The card still says who filed it; only the runtime's name is missing.
				slog.Warn("page: read runtime", "id", id, "err", err)
			}
			seen[id] = m
		}
		if m != nil {
			out[i].Runtime, out[i].Machine = m.Name, m.Machine
		} else {
			out[i].Runtime = id
		}
	}
	return out
}

// runtimeNames is where cards read runtime names: the runtime store, else
// the record store when it has them; nil when neither does.
func (s *Server) runtimeNames() runtimeReader {
	if s.runtimes != nil {
		return s.runtimes
	}
	if rt, ok := s.store.(runtimeReader); ok {
		return rt
	}
	return nil
}

func cardOf(ctx context.Context, rt runtimeReader, viewer models.Principal, r *models.Request) views.Card {
	return cardsOf(ctx, rt, viewer, r)[0]
}

func cardsOfRows(ctx context.Context, rt runtimeReader, viewer models.Principal, rows []models.Request) []views.Card {
	ptrs := make([]*models.Request, len(rows))
	for i := range rows {
		ptrs[i] = &rows[i]
	}
	return cardsOf(ctx, rt, viewer, ptrs...)
}

// toAudit is a request's trail as its page shows it.
func toAudit(id string, rows []store.Audit) views.Audit {
	out := views.Audit{RequestID: id, Rows: make([]views.AuditRow, len(rows))}
	for i, a := range rows {
		out.Rows[i] = views.AuditRow{At: a.CreatedAt, Version: a.Version, Action: a.Action, Actor: a.Actor, Via: a.Via, Detail: detailLines(a.Detail)}
	}
	return out
}

// detailLines turns an audit row's JSON detail into readable key/value
// lines: strings as they are, nested values ("before"/"after" of an edit) one
// level flattened ("title before"), anything else as compact JSON. Text that
// is not a JSON object shows as one line.
func detailLines(detail string) []views.KV {
	if detail == "" {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(detail), &m) != nil {
		return []views.KV{{Key: "detail", Value: detail}}
	}
	var out []views.KV
	for _, k := range sortedKeys(m) {
		if sub, ok := m[k].(map[string]any); ok && len(sub) > 0 {
			for _, sk := range sortedKeys(sub) {
				out = append(out, views.KV{Key: k + " " + sk, Value: plain(sub[sk])})
			}
			continue
		}
		out = append(out, views.KV{Key: k, Value: plain(m[k])})
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// plain is one JSON value as a person reads it.
func plain(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "none"
	}
	b, _ := json.Marshal(v)
	return string(b)
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
