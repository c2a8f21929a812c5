package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// AvailabilityStore keeps operators' away state and quiet hours (store.Store).
type AvailabilityStore interface {
	GetAvailability(ctx context.Context, operator string) (*models.Availability, error)
	SetAway(ctx context.Context, p models.Principal, away bool, until *time.Time) (*models.Availability, error)
	SetQuietHours(ctx context.Context, p models.Principal, q *models.QuietHours) (*models.Availability, error)
}

// availability is the store's AvailabilityStore, when it keeps one.
func (s *Server) availability() AvailabilityStore {
	a, _ := s.store.(AvailabilityStore)
	return a
}

func toAPIAvailability(a *models.Availability, now time.Time) api.Availability {
	out := api.Availability{Operator: a.Operator, Away: a.AwayAt(now), InQuietHours: a.QuietAt(now)}
	if out.Away && a.AwayUntil != nil {
		out.AwayUntil = utcPtr(*a.AwayUntil)
	}
	if a.QuietStart != "" {
		out.QuietHours = &api.QuietHours{Start: a.QuietStart, End: a.QuietEnd, TZ: a.QuietTZ}
	}
	return out
}

// getAvailability is GET /v1/me/availability.
func (s *Server) getAvailability(c echo.Context) error {
	a, err := s.availability().GetAvailability(c.Request().Context(), Principal(c).Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIAvailability(a, time.Now()))
}

// putAway is PUT /v1/me/away {"away": bool, "until"?}.
func (s *Server) putAway(c echo.Context) error {
	var in api.Away
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if in.Away == nil {
		return invalid("away is required: true or false")
	}
	a, err := s.availability().SetAway(c.Request().Context(), Principal(c), *in.Away, in.Until)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIAvailability(a, time.Now()))
}

// putQuietHours is PUT /v1/me/quiet-hours {"start", "end", "tz"}.
func (s *Server) putQuietHours(c echo.Context) error {
	var in api.QuietHours
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	a, err := s.availability().SetQuietHours(c.Request().Context(), Principal(c), &models.QuietHours{QuietStart: in.Start, QuietEnd: in.End, QuietTZ: in.TZ})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIAvailability(a, time.Now()))
}

// clearQuietHours is DELETE /v1/me/quiet-hours.
func (s *Server) clearQuietHours(c echo.Context) error {
	a, err := s.availability().SetQuietHours(c.Request().Context(), Principal(c), nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIAvailability(a, time.Now()))
}

// setAwayFromPage is the system page's away toggle (form field away: on or
// off); it returns to the page.
func (s *Server) setAwayFromPage(c echo.Context) error {
	var away bool
	switch c.FormValue("away") {
	case "on":
		away = true
	case "off":
	default:
		return invalid("away must be on or off")
	}
	if _, err := s.availability().SetAway(c.Request().Context(), Principal(c), away, nil); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/system")
}
