package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// RememberStore is what remembered allows need (store.Store): a decision
// that stores one, the list, and revocation, each audited.
type RememberStore interface {
	DecideRemembering(ctx context.Context, id string, d models.Decision, spec *store.RememberSpec) (*models.Request, *models.Remembered, error)
	ListRemembered(ctx context.Context) ([]models.Remembered, time.Time, error)
	RevokeRemembered(ctx context.Context, id, actor, via string) (*models.Remembered, error)
}

// listRemembered answers every remembered allow, newest first, live or not.
func listRemembered(c echo.Context, rs RememberStore) error {
	list, now, err := rs.ListRemembered(c.Request().Context())
	if err != nil {
		return err
	}
	out := api.RememberedList{Remembered: make([]api.Remembered, 0, len(list))}
	for i := range list {
		out.Remembered = append(out.Remembered, list[i].API(now))
	}
	return c.JSON(http.StatusOK, out)
}

// revokeRemembered ends a remembered allow at once; revoking it again
// answers it unchanged.
func revokeRemembered(c echo.Context, rs RememberStore) error {
	g, err := rs.RevokeRemembered(c.Request().Context(), c.Param("id"), Principal(c).Label(), via(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, g.API(time.Now())) // revoked: not live at any time
}

// decideRemembering records a decision that may also remember the allow:
// asked for in the body, or declared by the chosen option's filer.
func (s *Server) decideRemembering(ctx context.Context, id string, d models.Decision, in *api.Remember) (*models.Request, *models.Remembered, error) {
	rs, ok := s.store.(RememberStore)
	if !ok {
		if in != nil {
			return nil, nil, models.Errorf(models.ECodeInvalid, "this server keeps no remembered allows")
		}
		r, err := s.DecideAs(ctx, id, d)
		return r, nil, err
	}
	var spec *store.RememberSpec
	if in != nil {
		spec = &store.RememberSpec{Scope: in.Scope, For: in.For, Match: in.Match}
	}
	r, g, err := rs.DecideRemembering(ctx, id, d, spec)
	s.metrics.countDecision(r, err)
	return r, g, err
}
