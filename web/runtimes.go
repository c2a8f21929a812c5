package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// RuntimeStore is what the runtime routes need of the record.
type RuntimeStore interface {
	RegisterRuntime(ctx context.Context, p models.Principal, in models.RuntimeInput) (*models.Runtime, bool, error)
	GetRuntime(ctx context.Context, id string) (*models.Runtime, error)
	ListRuntimes(ctx context.Context, ownerID string) ([]models.RuntimeStatus, error)
	TouchRuntime(ctx context.Context, id string) error
	DecisionFeed(ctx context.Context, runtimeID string, after int64, limit int) ([]store.Forward, error)
	AckFeed(ctx context.Context, runtimeID string, upto int64) error
	SigningKey(ctx context.Context) (*store.ServerKey, error)
}

// toAPIRuntime is a runtime as the API shows it, with its forwarding health.
func toAPIRuntime(rt *models.Runtime, pending int64) api.Runtime {
	out := api.Runtime{
		ID: rt.ID, Name: rt.Name, Machine: rt.Machine, CallbackURL: rt.CallbackURL,
		CreatedAt: rt.CreatedAt.UTC(), LastSeenAt: rt.LastSeenAt.UTC(),
		Forwarding: api.Forwarding{LastResult: rt.LastResult, ConsecutiveFailures: rt.Failures, Pending: pending},
	}
	if rt.LastResultAt != nil {
		out.Forwarding.LastResultAt = utcPtr(*rt.LastResultAt)
	}
	return out
}

// registerRuntime registers the caller's runtime (201), or updates the one it
// registered under the same name (200).
func (s *Server) registerRuntime(c echo.Context) error {
	var in api.RuntimeRegistration
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	rt, created, err := s.runtimes.RegisterRuntime(c.Request().Context(), Principal(c), models.RuntimeInput(in))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, toAPIRuntime(rt, 0))
}

// listRuntimes answers every runtime to an operator, and a runtime its own.
func (s *Server) listRuntimes(c echo.Context) error {
	owner := ""
	if p := Principal(c); p.Role != models.RoleOperator {
		owner = p.ID
	}
	rows, err := s.runtimes.ListRuntimes(c.Request().Context(), owner)
	if err != nil {
		return err
	}
	out := api.Runtimes{Runtimes: make([]api.Runtime, len(rows))}
	for i := range rows {
		out.Runtimes[i] = toAPIRuntime(&rows[i].Runtime, rows[i].Pending)
	}
	return c.JSON(http.StatusOK, out)
}

// ownRuntime loads a runtime the caller registered, or answers not_found.
func (s *Server) ownRuntime(c echo.Context, id string) (*models.Runtime, error) {
	rt, err := s.runtimes.GetRuntime(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if rt.OwnerID != Principal(c).ID {
		return nil, models.Errorf(models.ECodeNotFound, "no runtime %s", id)
	}
	return rt, nil
}
