package web

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpInstructions tell a model what the server is for and how to wait.
const mcpInstructions = `Gatehouse is the operator's inbox: ask a person before risky work.
To get approval: call request_approval, then call wait_for_decision with its id in a loop
until "decided" is true, then act on request.decision (an option id) and request.note.
Never sleep to wait; wait_for_decision returns as soon as the person decides.
Use notify_operator for a one-way FYI and consult_operator for a question you can proceed without.`

// mcpCaller is what the HTTP side hands the MCP tools: who calls, and the
// HTTP request's context, whose end (the client went away) ends any wait.
type mcpCaller struct {
	principal models.Principal
	httpCtx   context.Context
}

type mcpCallerKey struct{}

// newMCPHandler builds the MCP server and its streamable HTTP handler. It is
// stateless: every POST is its own session, so nothing outlives the call that
// made it, and each call carries its own bearer token.
func (s *Server) newMCPHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gatehouse", Title: "Gatehouse", Version: "1"},
		&mcp.ServerOptions{Instructions: mcpInstructions})
	s.addMCPTools(srv)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		PropagateRequestCancellation: true,
		// Every call needs a bearer token, which a rebinding page cannot
		// send; and Gatehouse often sits behind a proxy on localhost whose
		// Host header is the public name.
		DisableLocalhostProtection: true,
	})
}

// serveMCP hands an authenticated agent or runtime call to the MCP handler.
func (s *Server) serveMCP(c echo.Context) error {
	if ok, err := checkMCPBody(c); !ok {
		return err
	}
	req := c.Request()
	ctx := context.WithValue(req.Context(), mcpCallerKey{}, mcpCaller{principal: Principal(c), httpCtx: req.Context()})
	s.mcp.ServeHTTP(c.Response(), req.WithContext(ctx))
	return nil
}

// mcpCallerOf returns the caller serveMCP put in the session's context.
func mcpCallerOf(ctx context.Context) (mcpCaller, bool) {
	c, ok := ctx.Value(mcpCallerKey{}).(mcpCaller)
	return c, ok
}
