package web

import (
	"net/http"
	"strings"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// patchRequest lets the owner change the text or options of an open request.
func (s *Server) patchRequest(c echo.Context) error {
	var in api.Patch
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	r, err := s.visibleRequest(c, c.Param("id"))
	if err != nil {
		return err
	}
	p := store.Patch{Version: in.Version, Title: in.Title, Summary: in.Summary, Detail: in.Detail, DefaultOption: in.DefaultOption}
	if in.Options != nil {
		opts := toModelOptions(*in.Options)
		p.Options = &opts
	}
	// The rules judge the edit: a decision they take is counted like any other.
	r, err = s.store.PatchRequest(c.Request().Context(), r.ID, Principal(c), p)
	if err != nil {
		return err
	}
	if r.Status == models.StatusResolved && r.DecidedVia != nil && strings.HasPrefix(*r.DecidedVia, "rule:") {
		s.metrics.countDecision(r, nil)
	}
	return c.JSON(http.StatusOK, toAPIRequest(r))
}

// cancelRequest lets the owner withdraw an open request, optionally saying
// why ({"reason": "…"}: the record's note).
func (s *Server) cancelRequest(c echo.Context) error {
	var in api.Cancel
	if err := bindOptionalJSON(c, &in); err != nil {
		return err
	}
	if in.Reason == nil {
		return s.withdraw(c, models.StatusCancelled)
	}
	r, err := s.visibleRequest(c, c.Param("id"))
	if err != nil {
		return err
	}
	r, err = s.store.WithdrawBecause(c.Request().Context(), r.ID, Principal(c), models.StatusCancelled, *in.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIRequest(r))
}

// dismissRequest lets an operator retire an item.
func (s *Server) dismissRequest(c echo.Context) error {
	return s.withdraw(c, models.StatusDismissed)
}

func (s *Server) withdraw(c echo.Context, status string) error {
	r, err := s.visibleRequest(c, c.Param("id"))
	if err != nil {
		return err
	}
	r, err = s.store.Withdraw(c.Request().Context(), r.ID, Principal(c), status)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIRequest(r))
}
