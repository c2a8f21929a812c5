package chattest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Slack is an in-process stand-in for Slack's Web API, answering the
// documented shapes of the methods Gatehouse calls; each call is recorded.
type Slack struct {
	*httptest.Server
	recorder
	token    string
	channels map[string]bool
	ts       int
}

// NewSlack starts a stand-in that takes the bot token and knows the
// channels; it stops at the test's cleanup.
func NewSlack(t testing.TB, token string, channels ...string) *Slack {
	s := &Slack{recorder: newRecorder(), token: token, channels: map[string]bool{}}
	for _, c := range channels {
		s.channels[c] = true
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// APIURL is what the chat file's slack.api_url names.
func (s *Slack) APIURL() string { return s.URL + "/api/" }

func (s *Slack) serve(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	call := Call{Method: method, Args: map[string]any{}, At: time.Now()}
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
		token = call.Str("token")
	}
	status := s.take(method)
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
		if !s.channels[call.Str("channel")] {
			fmt.Fprint(w, `{"ok":false,"error":"channel_not_found"}`)
			return
		}
		fmt.Fprintf(w, `{"ok":true,"channel":{"id":%q,"name":"ops","is_channel":true,"is_member":true}}`, call.Str("channel"))
	case "chat.postMessage":
		s.mu.Lock()
		s.ts++
		ts := fmt.Sprintf("1700000000.%06d", s.ts)
		s.mu.Unlock()
		fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q,"message":{"type":"message","ts":%q}}`, call.Str("channel"), ts, ts)
	case "chat.update":
		fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q,"text":""}`, call.Str("channel"), call.Str("ts"))
	case "chat.postEphemeral":
		fmt.Fprint(w, `{"ok":true,"message_ts":"1700000099.000001"}`)
	case "views.open":
		fmt.Fprint(w, `{"ok":true,"view":{"id":"V0MODAL","type":"modal"}}`)
	default:
		fmt.Fprint(w, `{"ok":false,"error":"unknown_method"}`)
	}
}
