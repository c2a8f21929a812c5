package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/web"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressClient connects as a1 with a client that hands every progress
// notification it receives to the returned channel.
func (e *mcpEnv) progressClient() (*mcp.ClientSession, <-chan *mcp.ProgressNotificationParams) {
	e.t.Helper()
	progress := make(chan *mcp.ProgressNotificationParams, 64)
	tr := &http.Transport{}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{e.tokens["a1"], tr}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close(); tr.CloseIdleConnections() })
	return cs, progress
}

// mcpGuard is how long a test waits for an event before failing; a deadline
// for a hang, not a speed assertion.
const mcpGuard = time.Minute

func TestMCPWaitHold(t *testing.T) {
	t.Run("a wait longer than the hold answers at the hold with waited saying so", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{MCPMaxHold: time.Second})
		cs := env.connect("a1", "")
		id := file(t, cs, "Hold me")
		w := out[mcpWaitResult](t, callTool(t, cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60}))
		if w.Decided || w.Waited != 1 || w.Request.Status != "open" {
			t.Fatalf("wait for 60 s under a 1 s hold answered %+v", w)
		}
	})
	t.Run("a call with a progress token gets progress until the decision", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{MCPProgressEvery: 20 * time.Millisecond})
		cs, progress := env.progressClient()
		id := file(t, cs, "Report on me")
		params := &mcp.CallToolParams{Name: "wait_for_decision", Arguments: map[string]any{"id": id, "seconds": 60}}
		params.SetProgressToken("wait-1")
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil {
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			done <- res
		}()
		last := -1.0
		for range 3 {
			select {
			case p := <-progress:
				if p.ProgressToken != "wait-1" || p.Progress <= last || p.Total != 50 {
					t.Fatalf("progress %+v after %v", p, last)
				}
				last = p.Progress
			case <-time.After(mcpGuard):
				t.Fatal("no progress notification")
			}
		}
		env.decide(id, "allow", "")
		select {
		case res := <-done:
			if w := out[mcpWaitResult](t, res); !w.Decided || w.Request.Status != "resolved" {
				t.Fatalf("after the decision: %+v", w)
			}
		case <-time.After(mcpGuard):
			t.Fatal("the wait did not answer the decision")
		}
	})
	t.Run("a call without a progress token gets none", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{MCPProgressEvery: 10 * time.Millisecond, MCPMaxHold: time.Second})
		cs, progress := env.progressClient()
		id := file(t, cs, "Quiet")
		w := out[mcpWaitResult](t, callTool(t, cs, "wait_for_decision", map[string]any{"id": id, "seconds": 5}))
		if w.Decided || w.Waited != 1 {
			t.Fatalf("answered %+v", w)
		}
		if n := len(progress); n != 0 {
			t.Fatalf("%d progress notifications for a call that asked for none", n)
		}
	})
}
