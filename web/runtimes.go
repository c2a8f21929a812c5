package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// RuntimeStore is what the runtime routes need of the record.
type RuntimeStore interface {
	RegisterRuntime(ctx context.Context, p models.Principal, in models.RuntimeInput) (*models.Runtime, bool, error)
	GetRuntime(ctx context.Context, id string) (*models.Runtime, error)
	ListRuntimes(ctx context.Context, ownerID string) ([]models.RuntimeStatus, error)
	TouchRuntime(ctx context.Context, id string) error
	DecisionFeed(ctx context.Context, runtimeID string, after int64, limit int) ([]models.Forward, error)
	AckFeed(ctx context.Context, runtimeID string, upto int64) error
	SigningKey(ctx context.Context) (*models.ServerKey, error)
}

// runtimeInput is the body of POST /v1/runtimes.
type runtimeInput struct {
	Name        string `json:"name"`
	Machine     string `json:"machine"`
	CallbackURL string `json:"callback_url"`
}

type apiForwarding struct {
	LastResult          string  `json:"last_result"`
	LastResultAt        *string `json:"last_result_at"`
	ConsecutiveFailures int     `json:"consecutive_failures"`
	Pending             int64   `json:"pending"`
}

// apiRuntime is a runtime as the API shows it, with its forwarding health.
type apiRuntime struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Machine     string        `json:"machine"`
	CallbackURL string        `json:"callback_url"`
	CreatedAt   string        `json:"created_at"`
	LastSeenAt  string        `json:"last_seen_at"`
	Forwarding  apiForwarding `json:"forwarding"`
}

func toAPIRuntime(rt *models.Runtime, pending int64) apiRuntime {
	out := apiRuntime{
		ID: rt.ID, Name: rt.Name, Machine: rt.Machine, CallbackURL: rt.CallbackURL,
		CreatedAt: rfc3339(rt.CreatedAt), LastSeenAt: rfc3339(rt.LastSeenAt),
		Forwarding: apiForwarding{LastResult: rt.LastResult, ConsecutiveFailures: rt.Failures, Pending: pending},
	}
	if rt.LastResultAt != nil {
		at := rfc3339(*rt.LastResultAt)
		out.Forwarding.LastResultAt = &at
	}
	return out
}

// registerRuntime registers the caller's runtime (201), or updates the one it
// registered under the same name (200).
func (s *Server) registerRuntime(c echo.Context) error {
	var in runtimeInput
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
	out := make([]apiRuntime, len(rows))
	for i := range rows {
		out[i] = toAPIRuntime(&rows[i].Runtime, rows[i].Pending)
	}
	return c.JSON(http.StatusOK, map[string]any{"runtimes": out})
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
