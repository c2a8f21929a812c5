package web

import (
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// routes lists every route in one place: the JSON API, the push devices, the
// runtimes and pending grants (when their stores are wired), MCP, metrics,
// login, and the operator's page.
func (s *Server) routes() {
	e := s.echo
	e.GET("/healthz", s.healthz)
	e.GET("/openapi.json", s.serveOpenAPI)

	operator := requireRoles(models.RoleOperator)
	filers := requireRoles(models.RoleRuntime, models.RoleAgent)
	anyone := requireRoles(models.RoleOperator, models.RoleRuntime, models.RoleAgent)
	runtime := requireRoles(models.RoleRuntime)

	v1 := e.Group("/v1", s.authenticate)
	// Hook routes only through hookRoute: whatever is not a decision is
	// answered as the hook's own "no decision" with a 2xx.
	s.hookRoute("/v1/hooks/claude-code", claudeCodeHook, s.answerClaudeCodeHook, s.authenticate, filers)
	v1.POST("/requests", s.fileRequest, filers)
	v1.GET("/requests", s.listRequests, anyone)
	v1.GET("/requests/:id", s.getRequest, anyone)
	v1.PATCH("/requests/:id", s.patchRequest, filers)
	v1.POST("/requests/:id/cancel", s.cancelRequest, filers)
	v1.GET("/requests/:id/wait", s.waitRequest, anyone)
	v1.POST("/requests/:id/decide", s.decideRequest, operator)
	v1.POST("/requests/:id/dismiss", s.dismissRequest, operator)
	v1.POST("/decisions", s.decideBatch, operator)
	v1.GET("/requests/:id/audit", s.auditRequest, operator)
	v1.GET("/rules", s.listRules, operator)
	if s.agentSessions() != nil {
		v1.GET("/agent-sessions", s.listAgentSessions, anyone)
		v1.POST("/agent-sessions/events", s.postSessionEvent, filers)
	}
	v1.GET("/sessions", s.listSessions, operator)
	v1.DELETE("/sessions/:id", s.endSession, operator)
	// Token administration, so the CLI can manage tokens with an operator's
	// token instead of the database file.
	if ts, ok := s.store.(TokenStore); ok {
		v1.POST("/tokens", func(c echo.Context) error { return createToken(c, ts) }, operator)
		v1.GET("/tokens", func(c echo.Context) error { return listTokens(c, ts) }, operator)
		v1.DELETE("/tokens/:id", func(c echo.Context) error { return revokeToken(c, ts) }, operator)
	}
	// The chat services' callbacks are verified by the chat package with each
	// service's secret, not by a token.
	if s.chat != nil {
		e.POST("/chat/*", echo.WrapHandler(s.chat))
	}
	if cl, ok := s.store.(ChatLinker); ok {
		v1.POST("/chat/link-codes", func(c echo.Context) error { return createChatLinkCode(c, cl) }, operator)
	}
	// The calling operator's own availability: nobody else's.
	if s.availability() != nil {
		v1.GET("/me/availability", s.getAvailability, operator)
		v1.PUT("/me/away", s.putAway, operator)
		v1.PUT("/me/quiet-hours", s.putQuietHours, operator)
		v1.DELETE("/me/quiet-hours", s.clearQuietHours, operator)
	}
	if rs, ok := s.store.(RememberStore); ok {
		v1.GET("/remembered", func(c echo.Context) error { return listRemembered(c, rs) }, operator)
		v1.DELETE("/remembered/:id", func(c echo.Context) error { return revokeRemembered(c, rs) }, operator)
	}
	if s.suggestions() != nil {
		v1.GET("/suggestions", s.listSuggestions, operator)
		v1.POST("/suggestions/:id/accept", s.acceptSuggestion, operator)
		v1.POST("/suggestions/:id/dismiss", s.dismissSuggestion, operator)
	}
	if s.audit != nil {
		v1.GET("/audit", s.listAudit, operator)
		v1.GET("/audit/head", s.getAuditHead, operator)
	}
	if s.devices != nil { // phone and browser notifications
		v1.GET("/devices", s.listDevices, operator)
		v1.POST("/devices", s.registerDevice, operator)
		v1.DELETE("/devices/:token", s.dropDevice, operator)
		v1.GET("/webpush/key", s.webPushKey, operator)
		v1.POST("/webpush/subscribe", s.subscribeWebPush, operator)
		v1.POST("/webpush/unsubscribe", s.unsubscribeWebPush, operator)
	}
	if s.runtimes != nil && s.changes != nil {
		v1.GET("/keys", s.getKeys)
		v1.POST("/runtimes", s.registerRuntime, requireRoles(models.RoleRuntime))
		v1.GET("/runtimes", s.listRuntimes, requireRoles(models.RoleOperator, models.RoleRuntime))
		v1.GET("/runtimes/:id/decisions", s.feedDecisions, requireRoles(models.RoleRuntime))
	}
	if s.grants != nil {
		v1.POST("/pending", s.filePending, runtime)
		v1.POST("/pending/claim", s.claimPending, runtime)
		v1.GET("/pending/:pending_id", s.getPending, runtime)
		v1.GET("/pending/:pending_id/wait", s.waitPending, runtime)
	}

	e.POST("/api/operator-attention/permissions/decide", s.decideAttention, s.authenticate, operator)
	e.GET("/metrics", s.metrics.serve, s.authenticate, operator)
	e.Any("/mcp", s.serveMCP, s.authenticate, filers)

	// The page's HTML goes gzipped; the API, long-polls, MCP, the hook route
	// and the websocket never pass through gzip (a wait must not be buffered).
	gz := compressPages()
	e.GET("/login", s.loginLink, gz, s.authenticate, s.limitLogins)
	// No session check on POST: logging in replaces any session, so it needs no CSRF token.
	e.POST("/login", s.loginToken, gz, s.limitLogins)
	e.POST("/logout", s.logout, s.authenticate)

	// The operator's page: static assets (gzipped ahead, sendAsset), the
	// inbox, a request, the system page, the form posts and the live websocket.
	e.Use(s.securityHeaders)
	e.GET("/static/*", s.serveStatic)
	e.HEAD("/static/*", s.serveStatic)
	e.GET("/sw.js", s.serveServiceWorker)
	page := []echo.MiddlewareFunc{gz, s.pageErrors, s.authenticate, s.requirePageOperator}
	e.GET("/", s.showInbox, page...)
	e.GET("/requests/:id", s.showRequest, page...)
	e.GET("/system", s.showSystem, page...)
	if s.agentSessions() != nil {
		e.GET("/agents", s.showAgents, page...)
	}
	e.POST("/requests/:id/decide", s.decideFromPage, page...)
	e.POST("/requests/:id/dismiss", s.dismissFromPage, page...)
	e.POST("/decisions", s.decideBatchFromPage, page...)
	if s.availability() != nil {
		e.POST("/me/away", s.setAwayFromPage, page...)
	}
	e.POST("/remembered/:id/revoke", s.revokeFromPage, page...)
	if s.suggestions() != nil {
		e.POST("/suggestions/:id/accept", s.acceptSuggestionFromPage, page...)
		e.POST("/suggestions/:id/dismiss", s.dismissSuggestionFromPage, page...)
	}
	e.GET("/ws", s.connectPage, s.authenticate, operator)
}
