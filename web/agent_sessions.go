package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// AgentSessionStore is what the agent session routes need of the record (a
// *store.Store); a store without it serves no such routes.
type AgentSessionStore interface {
	SessionEvent(ctx context.Context, p models.Principal, e models.SessionEvent) (*models.AgentSession, *models.Request, error)
	ListAgentSessions(ctx context.Context, owner string) ([]models.SessionView, error)
	GetAgentSession(ctx context.Context, owner, id string) (*models.SessionView, error)
}

func (s *Server) agentSessions() AgentSessionStore {
	as, _ := s.store.(AgentSessionStore)
	return as
}

// listAgentSessions answers every session to an operator, and an agent or a
// runtime the sessions its own token reported.
func (s *Server) listAgentSessions(c echo.Context) error {
	owner := ""
	if p := Principal(c); p.Role != models.RoleOperator {
		owner = p.ID
	}
	list, err := s.agentSessions().ListAgentSessions(c.Request().Context(), owner)
	if err != nil {
		return err
	}
	out := api.AgentSessions{Sessions: make([]api.AgentSession, 0, len(list))}
	for _, v := range list {
		out.Sessions = append(out.Sessions, toAPIAgentSession(v))
	}
	return c.JSON(http.StatusOK, out)
}

// postSessionEvent records one event of the caller's session.
func (s *Server) postSessionEvent(c echo.Context) error {
	var in api.SessionEvent
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	out, err := s.sessionEvent(c.Request().Context(), Principal(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// recordSessionEvent records e for p: what the http hook needs, which
// answers nothing of it.
func (s *Server) recordSessionEvent(ctx context.Context, p models.Principal, e api.SessionEvent) error {
	_, _, err := s.agentSessions().SessionEvent(ctx, p, modelEvent(e))
	return err
}

func modelEvent(e api.SessionEvent) models.SessionEvent {
	return models.SessionEvent{Session: e.Session, Agent: e.Agent, Kind: e.Event,
		Machine: e.Machine, Cwd: e.Cwd, RuntimeID: e.RuntimeID, Message: e.Message, CanReply: e.CanReply, Prompt: e.Prompt}
}

// sessionEvent records e for p and answers the session as listed and its
// open waiting item.
func (s *Server) sessionEvent(ctx context.Context, p models.Principal, e api.SessionEvent) (*api.SessionEventAnswer, error) {
	as := s.agentSessions()
	_, w, err := as.SessionEvent(ctx, p, modelEvent(e))
	if err != nil {
		return nil, err
	}
	v, err := as.GetAgentSession(ctx, p.ID, e.Session)
	if err != nil {
		return nil, err
	}
	out := &api.SessionEventAnswer{Session: toAPIAgentSession(*v)}
	if w != nil && w.Open() {
		out.Waiting = apiOf(w)
	}
	return out, nil
}

func toAPIAgentSession(v models.SessionView) api.AgentSession {
	out := api.AgentSession{ID: v.ID, Agent: v.Agent, RuntimeID: v.RuntimeID, Machine: v.Machine, Cwd: v.Cwd,
		State: v.State, Since: v.StateSince.UTC(), OpenRequests: v.OpenRequests, LastMessage: v.LastMessage}
	if v.State == models.SessionWaiting {
		out.WaitingID = v.WaitingID
	}
	return out
}
