package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// agentsWS is the Sessions view's websocket: the hub sends it the session
// list, not the inbox's cards.
const agentsWS = "/ws?view=agents"

// showAgents is GET /agents: every agent session, who waits first, live.
func (s *Server) showAgents(c echo.Context) error {
	rows, err := s.sessionRows(c.Request().Context())
	if err != nil {
		return err
	}
	pg := s.pageOf(c, "Sessions", agentsWS)
	pg.View = "agents"
	return render(c, http.StatusOK, views.AgentsPage(views.Agents{Page: pg, Rows: rows, Now: time.Now()}))
}

// sessionRows is every session as the view shows it, in the store's order:
// waiting and blocked first, longest first; then working; then ended.
func (s *Server) sessionRows(ctx context.Context) ([]views.SessionRow, error) {
	list, err := s.agentSessions().ListAgentSessions(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]views.SessionRow, len(list))
	for i, v := range list {
		out[i] = views.SessionRow{
			Key: sessionKey(v), ID: v.ID, Agent: v.Agent, Machine: v.Machine, Cwd: v.Cwd, State: v.State,
			Since: v.StateSince, OpenRequests: v.OpenRequests, LastMessage: v.LastMessage,
		}
		if v.State == models.SessionWaiting && v.WaitingID != nil {
			out[i].WaitingID = *v.WaitingID
		}
	}
	return out, nil
}

// sessionKey tells apart two owners' sessions of one client id, in characters
// an element id takes.
func sessionKey(v models.SessionView) string {
	return v.OwnerID + "-" + shortHash(v.ID)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
