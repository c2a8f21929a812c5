package web

import (
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// claimPending releases one approved grant bound to the exact request sent: 200
// {released: true}. Refusals: 404 no_grant (file it as new); 409
// approval_pending and 403 approval_denied / approval_expired, whose bodies are
// written for the agent so the middleware can hand them on unchanged.
func (s *Server) claimPending(c echo.Context) error {
	var in api.NewPending
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	g, err := s.grants.ClaimGrant(c.Request().Context(), Principal(c), toTarget(in))
	switch code := models.ErrorCode(err); {
	case err == nil:
		return c.JSON(http.StatusOK, api.Claimed{Released: true, PendingID: g.PendingID, RequestID: g.RequestID, Digest: g.Digest})
	case g == nil:
		return err
	case code == models.ECodeApprovalPending:
		return c.JSON(statusOf[code], s.agentPending(g).Body)
	default:
		return c.JSON(statusOf[code], agentRefusal(code, g))
	}
}
