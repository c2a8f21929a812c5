// Package modelmock holds stand-ins for the model APIs the real agent CLIs
// talk to (Anthropic Messages, OpenAI Responses, Gemini generateContent), so
// tests and benchmarks can run Claude Code, Codex and Gemini CLI offline.
// Each is an httptest server on 127.0.0.1 whose model asks for shell
// commands and, once handed their results, says "done"; an agent process may
// serve several conversations, so each mock reads which turn it is from the
// conversation it is sent.
package modelmock

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// maxBody bounds what a mock reads of one request.
const maxBody = 32 << 20

// start serves h on 127.0.0.1 only, until the test ends.
func start(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// calls records the API calls a mock answered, for a failing test's log.
type calls struct {
	mu    sync.Mutex
	paths []string
}

func (c *calls) add(r *http.Request) {
	c.mu.Lock()
	c.paths = append(c.paths, r.Method+" "+r.URL.Path)
	c.mu.Unlock()
}

// Seen lists the API calls the mock answered.
func (c *calls) Seen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.paths, ", ")
}
