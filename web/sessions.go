package web

import (
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/labstack/echo/v4"
)

// listSessions answers the live page sessions, without their secrets.
func (s *Server) listSessions(c echo.Context) error {
	ss, err := s.store.ListSessions(c.Request().Context())
	if err != nil {
		return err
	}
	out := api.Sessions{Sessions: make([]api.Session, 0, len(ss))}
	for _, x := range ss {
		out.Sessions = append(out.Sessions, api.Session{ID: x.ID, Operator: x.Name, CreatedAt: x.CreatedAt.UTC(),
			LastSeenAt: x.LastSeenAt.UTC(), UserAgent: x.UserAgent, ExpiresAt: x.ExpiresAt.UTC()})
	}
	return c.JSON(http.StatusOK, out)
}

// endSession ends one session by id; its cookie is refused at once, on every
// replica (the store's revocation path).
func (s *Server) endSession(c echo.Context) error {
	if err := s.store.EndSessionID(c.Request().Context(), c.Param("id"), Principal(c).Label(), via(c)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
