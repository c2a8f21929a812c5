package chat_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// slackCall is one call the stand-in received: the Web API method, its
// arguments (form fields, or a JSON body's members) and when it came.
type slackCall struct {
	Method string
	Args   map[string]any
	At     time.Time
}

// str is an argument as a string ("" when absent).
func (c slackCall) str(name string) string {
	s, _ := c.Args[name].(string)
	return s
}

// blocks is the blocks argument of a message call, decoded.
func (c slackCall) blocks(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal([]byte(c.str("blocks")), &out); err != nil {
		t.Fatalf("%s blocks: %v: %q", c.Method, err, c.str("blocks"))
	}
	return out
}

// slackStandIn is an in-process stand-in for Slack's Web API, answering the
// documented shapes of the methods Gatehouse calls; each call is recorded.
type slackStandIn struct {
	*httptest.Server
	token    string
	channels map[string]bool

	mu     sync.Mutex
	calls  map[string]chan slackCall
	counts map[string]int
	ts     int
	// script answers the next calls of a method with these statuses first.
	script map[string][]int
}

func newSlackStandIn(t testing.TB, token string, channels ...string) *slackStandIn {
	s := &slackStandIn{token: token, channels: map[string]bool{}, calls: map[string]chan slackCall{}, counts: map[string]int{}, script: map[string][]int{}}
	for _, c := range channels {
		s.channels[c] = true
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// APIURL is what the chat file's slack.api_url names.
func (s *slackStandIn) APIURL() string { return s.URL + "/api/" }

func (s *slackStandIn) ch(method string) chan slackCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[method]
	if !ok {
		c = make(chan slackCall, 100)
		s.calls[method] = c
	}
	return c
}

// next waits for the next call of method.
func (s *slackStandIn) next(t testing.TB, method string) slackCall {
	t.Helper()
	select {
	case c := <-s.ch(method):
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s call within 10s", method)
		return slackCall{}
	}
}

// count is how many calls of method have come.
func (s *slackStandIn) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method]
}

// fail answers the next calls of method with these statuses.
func (s *slackStandIn) fail(method string, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script[method] = append(s.script[method], statuses...)
}

func (s *slackStandIn) serve(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	call := slackCall{Method: method, Args: map[string]any{}, At: time.Now()}
	body, _ := io.ReadAll(r.Body)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(body, &call.Args)
	} else {
		form, _ := url.ParseQuery(string(body))
		for k := range form {
			call.Args[k] = form.Get(k)
		}
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = call.str("token")
	}
	s.mu.Lock()
	s.counts[method]++
	status := 0
	if q := s.script[method]; len(q) > 0 {
		status, s.script[method] = q[0], q[1:]
	}
	s.mu.Unlock()
	s.ch(method) <- call
	w.Header().Set("Content-Type", "application/json")
	switch {
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(status)
		return
	case status != 0:
		w.WriteHeader(status)
		return
	case token != s.token:
		fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
		return
	}
	switch method {
	case "auth.test":
		fmt.Fprint(w, `{"ok":true,"url":"https://example.slack.com/","team":"Example","user":"gatehouse","team_id":"T0EXAMPLE","user_id":"U0BOT","bot_id":"B0BOT"}`)
	case "conversations.info":
		if !s.channels[call.str("channel")] {
			fmt.Fprint(w, `{"ok":false,"error":"channel_not_found"}`)
			return
		}
		fmt.Fprintf(w, `{"ok":true,"channel":{"id":%q,"name":"ops","is_channel":true,"is_member":true}}`, call.str("channel"))
	case "chat.postMessage":
		s.mu.Lock()
		s.ts++
		ts := fmt.Sprintf("1700000000.%06d", s.ts)
		s.mu.Unlock()
		fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q,"message":{"type":"message","ts":%q}}`, call.str("channel"), ts, ts)
	case "chat.update":
		fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q,"text":""}`, call.str("channel"), call.str("ts"))
	case "chat.postEphemeral":
		fmt.Fprint(w, `{"ok":true,"message_ts":"1700000099.000001"}`)
	case "views.open":
		fmt.Fprint(w, `{"ok":true,"view":{"id":"V0MODAL","type":"modal"}}`)
	default:
		fmt.Fprint(w, `{"ok":false,"error":"unknown_method"}`)
	}
}
