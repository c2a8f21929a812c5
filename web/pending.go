package web

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// Grants is what the pending-grant routes need of the store.
type Grants interface {
	CreatePending(ctx context.Context, p models.Principal, n models.NewGrant) (*models.Grant, *models.Request, error)
	GetGrant(ctx context.Context, owner, pendingID string) (*models.Grant, *models.Request, error)
	ClaimGrant(ctx context.Context, p models.Principal, t models.Target) (*models.Grant, error)
}

// DefaultMaxPendingWait caps a middleware's max_wait unless Config says otherwise.
const DefaultMaxPendingWait = time.Hour

// toTarget is the exact request a filing or a claim names.
func toTarget(in api.NewPending) models.Target {
	return models.Target{Sandbox: in.Sandbox, Method: in.Method, Host: in.Host, Port: in.Port, Path: in.Path, Query: in.Query, BodySHA256: in.BodySHA256}
}

// toPendingStatus is a grant as the API shows it.
func toPendingStatus(g *models.Grant, r *models.Request) api.PendingStatus {
	return api.PendingStatus{
		PendingID: g.PendingID, Status: g.Status(r, time.Now()), Digest: g.Digest,
		ExpiresAt: g.ExpiresAt.UTC(), RequestID: g.RequestID, Released: g.State == models.GrantReleased,
	}
}

const (
	pendingDetail   = "This exact request needs a person's approval before it can be sent. Gatehouse has asked the operator. Nothing was sent."
	pendingGuidance = "Do not change the request to get around this, and do not resend it in a loop. " +
		"Call the wait URL (GET): it answers when the person decides, or after about a minute with \"timed_out\": true, then call it again. " +
		"If \"status\" is \"approved\", send the identical request once more (same method, URL, query and body); it will go through once. " +
		"If it is \"denied\" or \"expired\", do not resend it: tell the user the request was not approved. " +
		"You may tell the user that an approval is waiting in their Gatehouse inbox."
	retryDetail     = "After the wait answers \"approved\", send the identical request again, once, before expires_at."
	waitDetail      = "Long-poll this URL for the decision; call again while it answers \"timed_out\": true."
	deniedDetail    = "The operator denied this exact request. It was not sent."
	deniedGuidance  = "Do not resend this request or a variant of it. Tell the user the operator denied it, and continue without it or ask the user what to do."
	expiredDetail   = "The approval for this exact request expired before it was used. It was not sent."
	expiredGuidance = "Do not resend this request in a loop. Tell the user the approval expired; if the user still wants it, they can ask you to try once more, which asks the operator again."
)

// agentPending is the 403 approval_pending response for a grant.
func (s *Server) agentPending(g *models.Grant) api.AgentResponse {
	return api.AgentResponse{Status: 403, Body: api.AgentBody{
		Error: models.ECodeApprovalPending, Detail: pendingDetail, Policy: g.Policy, Middleware: g.Middleware,
		PendingID: g.PendingID, ExpiresAt: g.ExpiresAt.UTC(),
		NextSteps: []api.NextStep{
			{Action: "wait", Method: "GET", URL: s.BaseURL() + "/v1/pending/" + g.PendingID + "/wait", Detail: waitDetail},
			{Action: "retry", When: models.GrantApproved, Detail: retryDetail},
		},
		AgentGuidance: pendingGuidance,
	}}
}

// agentRefusal is the body of a claim refused for a denied or expired grant.
func agentRefusal(code string, g *models.Grant) api.AgentBody {
	b := api.AgentBody{Error: code, Detail: deniedDetail, Policy: g.Policy, Middleware: g.Middleware,
		PendingID: g.PendingID, ExpiresAt: g.ExpiresAt.UTC(), NextSteps: []api.NextStep{}, AgentGuidance: deniedGuidance}
	if code == models.ECodeApprovalExpired {
		b.Detail, b.AgentGuidance = expiredDetail, expiredGuidance
	}
	return b
}

// visibleGrant loads a grant the caller owns, or answers not_found: pending ids
// are scoped to their owner, so another runtime's is simply not there.
func (s *Server) visibleGrant(c echo.Context, id string) (*models.Grant, *models.Request, error) {
	return s.grants.GetGrant(c.Request().Context(), Principal(c).ID, id)
}
