package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"unicode/utf8"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// claudeCodeSessionHook answers Claude Code's session events (Stop,
// Notification, UserPromptSubmit, SessionStart, SessionEnd, PostToolUse,
// SubagentStop) at the http hook: it records the event and answers 204 at
// once, Claude Code's "no decision", whatever became of it, so a session
// event never blocks or fails the session. done is false for a tool call to
// decide, whose body is left for the permission hook to read.
func (s *Server) claudeCodeSessionHook(c echo.Context) (done bool, err error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return true, err // the body limit's 413
	}
	if !hookanswer.IsClaudeCodeSessionEvent(body) || s.agentSessions() == nil {
		c.Request().Body = io.NopCloser(bytes.NewReader(body))
		return false, nil
	}
	// What readClaudeCodeHook refuses in a tool call's input is refused here
	// too: invalid UTF-8, a key twice under any case folding.
	if !utf8.Valid(body) {
		return true, models.Errorf(codeInvalidJSON, "the body holds invalid UTF-8; send UTF-8 text")
	}
	if err := uniqueKeys(body); err != nil {
		return true, err
	}
	in, err := hookanswer.ParseClaudeCodeSession(body)
	if err != nil {
		return true, invalid("%s", err.Error())
	}
	if e, ok := in.Event(""); ok {
		if err := s.recordSessionEvent(c.Request().Context(), Principal(c), e); err != nil {
			slog.Warn("claude code session event not recorded", "event", in.HookEventName, "err", err)
		}
	}
	return true, c.NoContent(http.StatusNoContent)
}

// permissionMovedOn tells the session of a PermissionRequest the operator
// decided that it moved on, which resolves its waiting item. It never fails
// the hook's answer.
func (s *Server) permissionMovedOn(ctx context.Context, p models.Principal, in *hookanswer.ClaudeCodeHookInput, r *models.Request) {
	if in.HookEventName != hookanswer.EventPermissionRequest || in.SessionID == "" || r.Status != models.StatusResolved || s.agentSessions() == nil {
		return
	}
	e := api.SessionEvent{Session: in.SessionID, Agent: hookanswer.AgentClaudeCode, Event: models.EventMoved, Cwd: in.Cwd}
	if err := s.recordSessionEvent(ctx, p, e); err != nil {
		slog.Warn("claude code session event not recorded", "event", "PermissionRequest", "err", err)
	}
}
