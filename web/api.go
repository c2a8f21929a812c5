package web

import (
	"errors"
	"io"
	"net"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// utcPtr is t in UTC, for an optional time of the API.
func utcPtr(t time.Time) *time.Time {
	t = t.UTC()
	return &t
}

// toAPIRequest is the record as the API shows it.
func toAPIRequest(r *models.Request) api.Request {
	out := api.Request{
		ID: r.ID, Kind: r.Kind, Status: r.Status, Version: r.Version, Title: r.Title, Summary: r.Summary,
		Detail: r.Detail, Risk: nilIfEmpty(r.Risk), Tool: r.Tool, Command: r.Command, Options: make([]api.Option, len(r.Options)),
		AllowAnswer: r.AllowAnswer, Decision: r.Decision, Answer: r.Answer, Note: r.Note, Source: r.Source,
		SourceRef: r.SourceRef, RuntimeID: r.RuntimeID, PendingID: r.PendingID, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(),
		DecidedBy: r.DecidedBy, DecidedVia: r.DecidedVia,
		Actuation: api.Actuation{State: r.ActuationState, Attempts: r.Attempts},
		Sealed:    r.Sealed, ActionDigest: r.ActionDigest(), DecidedDigest: r.DecidedDigest,
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
		out.Actuation.State = models.ActuationNone
	}
	out.Approvals = toAPIApprovals(r)
	return out
}

func toAPIApprovals(r *models.Request) *api.Approvals {
	a := r.Approvers
	if a == nil {
		return nil
	}
	out := &api.Approvals{Groups: a.Groups, Required: a.Required, Votes: make([]api.Vote, len(r.Votes))}
	if out.Groups == nil {
		out.Groups = []string{}
	}
	if a.Note != "" {
		n := a.Note
		out.Note = &n
	}
	for i, v := range r.Votes {
		out.Votes[i] = api.Vote{By: v.By, Decision: v.Decision, Note: v.Note, At: v.At.UTC()}
	}
	return out
}

func toModelApprovers(in *api.Approvers) *models.Approvers {
	if in == nil {
		return nil
	}
	return &models.Approvers{Groups: in.Groups, Required: in.Required, Note: in.Note}
}

func toModelOptions(in []api.Option) []models.Option {
	if in == nil {
		return nil
	}
	out := make([]models.Option, len(in))
	for i, o := range in {
		out[i] = models.Option(o)
	}
	return out
}

// bindJSON decodes a JSON body strictly: unknown fields, repeated keys and
// trailing data are errors, so a typo (or a second "title" a log would not
// show) is refused rather than silently ignored.
func bindJSON(c echo.Context, v any) error {
	body, err := io.ReadAll(c.Request().Body)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return models.Errorf(models.ECodeInvalid, "the body did not arrive in time")
	}
	if err != nil {
		// Echo's body limit fails the read with a 413 *echo.HTTPError.
		return err
	}
	return decodeStrict(body, v)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
