package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// filePending files a pending grant and answers at once (201) with what the
// sandbox does next.
func (s *Server) filePending(c echo.Context) error {
	var in api.NewPending
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if wait, err := s.allowFiling(Principal(c)); err != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(wait))
		return err
	}
	n := models.NewGrant{Target: toTarget(in), Policy: in.Policy, Middleware: in.Middleware, PendingID: in.PendingID}
	if in.Body != nil || in.BodySize != nil {
		n.Body = &models.GrantBody{Head: in.Body, Size: int64(len(in.Body))}
		if in.BodySize != nil {
			n.Body.Size = *in.BodySize
		}
	}
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
	out := api.PendingFiled{PendingID: g.PendingID, Status: g.Status(r, time.Now()), ExpiresAt: g.ExpiresAt.UTC(),
		Digest: g.Digest, RequestID: r.ID}
	switch out.Status {
	case models.GrantPending:
		res := s.agentPending(g)
		out.Response = &res
	case models.GrantApproved:
		out.ClaimNow = true
	case models.GrantDenied:
		out.Response = &api.AgentResponse{Status: 403, Body: agentRefusal(models.ECodeApprovalDenied, g)}
	default:
		out.Response = &api.AgentResponse{Status: 403, Body: agentRefusal(models.ECodeApprovalExpired, g)}
	}
	c.Response().Header().Set("Location", "/v1/pending/"+g.PendingID)
	return c.JSON(http.StatusCreated, out)
}
