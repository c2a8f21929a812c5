package web

import (
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// claimed answers a claim that released a grant.
type claimed struct {
	Released  bool   `json:"released"`
	PendingID string `json:"pending_id"`
	RequestID string `json:"request_id"`
	Digest    string `json:"digest"`
}

// claimPending releases one approved grant bound to the exact request sent: 200
// {released: true}. Refusals: 404 no_grant (file it as new); 409
// approval_pending and 403 approval_denied / approval_expired, whose bodies are
// written for the agent so the middleware can hand them on unchanged.
func (s *Server) claimPending(c echo.Context) error {
	var in pendingInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	g, err := s.grants.ClaimGrant(c.Request().Context(), Principal(c), in.target())
	switch code := models.ErrorCode(err); {
	case err == nil:
		return c.JSON(http.StatusOK, claimed{Released: true, PendingID: g.PendingID, RequestID: g.RequestID, Digest: g.Digest})
	case g == nil:
		return err
	case code == models.ECodeApprovalPending:
		return c.JSON(statusOf[code], s.agentPending(g).Body)
	default:
		return c.JSON(statusOf[code], agentRefusal(code, g))
	}
}
