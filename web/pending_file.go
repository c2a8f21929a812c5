package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// pendingFiled answers POST /v1/pending. Status is the grant's status once
// filed: a rule may have decided it already. Response is what the middleware
// hands the agent unchanged (approval_pending, or approval_denied when a rule
// denied it); when a rule approved it there is nothing to hand on: ClaimNow
// tells the middleware to claim the request at once and forward it on 200.
type pendingFiled struct {
	PendingID string         `json:"pending_id"`
	Status    string         `json:"status"`
	ExpiresAt string         `json:"expires_at"`
	Digest    string         `json:"digest"`
	RequestID string         `json:"request_id"`
	ClaimNow  bool           `json:"claim_now"`
	Response  *agentResponse `json:"response,omitempty"`
}

// filePending files a pending grant and answers at once (201) with what the
// sandbox does next.
func (s *Server) filePending(c echo.Context) error {
	var in pendingInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	n := models.NewGrant{Target: in.target(), Policy: in.Policy, Middleware: in.Middleware, PendingID: in.PendingID}
	if in.MaxWait != nil {
		if *in.MaxWait <= 0 {
			return invalid("max_wait must be a positive number of seconds")
		}
		// Capped, not refused: expires_at tells the middleware what it got.
		n.MaxWait = min(time.Duration(min(*in.MaxWait, 1<<31))*time.Second, s.cfg.MaxPendingWait)
	}
	g, r, err := s.grants.CreatePending(c.Request().Context(), Principal(c), n)
	if err != nil {
		return err
	}
	if r.DecidedVia != nil && strings.HasPrefix(*r.DecidedVia, "rule:") {
		s.metrics.countDecision(r, nil)
	}
	out := pendingFiled{PendingID: g.PendingID, Status: g.Status(r, time.Now()), ExpiresAt: rfc3339(g.ExpiresAt),
		Digest: g.Digest, RequestID: r.ID}
	switch out.Status {
	case models.GrantPending:
		res := s.agentPending(g)
		out.Response = &res
	case models.GrantApproved:
		out.ClaimNow = true
	case models.GrantDenied:
		out.Response = &agentResponse{Status: 403, Body: agentRefusal(models.ECodeApprovalDenied, g)}
	default:
		out.Response = &agentResponse{Status: 403, Body: agentRefusal(models.ECodeApprovalExpired, g)}
	}
	c.Response().Header().Set("Location", "/v1/pending/"+g.PendingID)
	return c.JSON(http.StatusCreated, out)
}
