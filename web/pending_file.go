package web

import (
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// pendingFiled answers POST /v1/pending.
type pendingFiled struct {
	PendingID string        `json:"pending_id"`
	ExpiresAt string        `json:"expires_at"`
	Digest    string        `json:"digest"`
	RequestID string        `json:"request_id"`
	Response  agentResponse `json:"response"`
}

// filePending files a pending grant and answers at once (201) with the response
// the sandbox hands the agent.
func (s *Server) filePending(c echo.Context) error {
	var in pendingInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	n := models.NewGrant{Target: in.target(), Policy: in.Policy, Middleware: in.Middleware, PendingID: in.PendingID}
	if in.MaxWait != nil {
		if *in.MaxWait <= 0 {
			return invalid("max_wait must be a positive number of seconds")
		}
		// Capped, not refused: expires_at tells the middleware what it got.
		n.MaxWait = min(time.Duration(min(*in.MaxWait, 1<<31))*time.Second, s.cfg.MaxPendingWait)
	}
	g, r, err := s.grants.CreatePending(c.Request().Context(), Principal(c), n, s.hooks...)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/v1/pending/"+g.PendingID)
	return c.JSON(http.StatusCreated, pendingFiled{
		PendingID: g.PendingID, ExpiresAt: rfc3339(g.ExpiresAt), Digest: g.Digest, RequestID: r.ID,
		Response: s.agentPending(g),
	})
}
