package web

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Config.MCPMaxHold and MCPProgressEvery. The official TypeScript
// SDK abandons a call after 60 s by default ("Request timed out", then the
// late answer is "a response for an unknown message ID"), so a wait answers
// well before that; progress lets a client that resets its timer on progress
// keep a call alive.
const (
	DefaultMCPMaxHold       = 50 * time.Second
	DefaultMCPProgressEvery = 10 * time.Second
)

// mcpHold is how long a wait for seconds holds the call.
func (s *Server) mcpHold(seconds int) time.Duration {
	return min(time.Duration(seconds)*time.Second, s.cfg.MCPMaxHold)
}

// reportProgress sends notifications/progress on the call's own stream every
// MCPProgressEvery while the wait holds, when the call carries a progress
// token. The returned stop ends it and returns once no notification is in
// flight, so none follows the call's answer.
func (s *Server) reportProgress(ctx context.Context, req *mcp.CallToolRequest, hold time.Duration) (stop func()) {
	if req == nil || req.Params == nil || req.Session == nil {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return func() {}
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(s.cfg.MCPProgressEvery)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: time.Since(start).Seconds(), Total: hold.Seconds(),
				Message: "still waiting for the operator's decision",
			})
			if err != nil {
				return // the stream is gone; the wait itself ends on the context
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}
