package web

import (
	"net/http"
	"strconv"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// listRequests lists requests newest first; callers other than operators see
// only their own.
func (s *Server) listRequests(c echo.Context) error {
	f := store.ListFilter{
		Status: c.QueryParam("status"), Kind: c.QueryParam("kind"), Risk: c.QueryParam("risk"),
		Cursor: c.QueryParam("cursor"),
	}
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			return invalid("limit must be a whole number from 1 to 200")
		}
		f.Limit = n
	}
	if p := Principal(c); p.Role != models.RoleOperator {
		f.OwnerID = p.ID
	}
	rows, next, err := s.store.ListRequests(c.Request().Context(), f)
	if err != nil {
		return err
	}
	out := api.List{Requests: make([]api.Request, len(rows)), NextCursor: next}
	for i := range rows {
		out.Requests[i] = toAPIRequest(&rows[i])
	}
	return c.JSON(http.StatusOK, out)
}

// getRequest answers one record.
func (s *Server) getRequest(c echo.Context) error {
	r, err := s.visibleRequest(c, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIRequest(r))
}

// auditRequest answers one request's entries of the chain, oldest first, in
// the shape of GET /v1/audit.
func (s *Server) auditRequest(c echo.Context) error {
	r, err := s.visibleRequest(c, c.Param("id"))
	if err != nil {
		return err
	}
	rows, err := s.store.AuditTrail(c.Request().Context(), r.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newAuditPage(0, rows, 0))
}
