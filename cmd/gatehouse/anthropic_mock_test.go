package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// anthropicMock is a small Anthropic Messages API on 127.0.0.1: the model it
// plays asks for the Bash commands in cmds, one per turn, then ends the turn.
// It records every tool_result Claude Code sends back, so a test reads what
// the model was told.
type anthropicMock struct {
	t    testing.TB
	cmds []string
	srv  *httptest.Server

	mu      sync.Mutex
	results []toolResult
	paths   []string
}

// toolResult is one tool_result block Claude Code sent the model.
type toolResult struct {
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
	Content   string `json:"-"`
}

func newAnthropicMock(t testing.TB, cmds ...string) *anthropicMock {
	m := &anthropicMock{t: t, cmds: cmds}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// messagesBody is the part of a Messages API request the mock reads.
type messagesBody struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (m *anthropicMock) serve(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.paths = append(m.paths, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		fmt.Fprint(w, `{"input_tokens":10}`)
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, http.StatusNotFound)
		return
	}
	var body messagesBody
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&body); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	hasBash := false
	for _, tl := range body.Tools {
		hasBash = hasBash || tl.Name == "Bash"
	}
	// The conversation's tool results so far say which turn this is.
	var results []toolResult
	for _, msg := range body.Messages {
		results = append(results, toolResults(msg.Role, msg.Content)...)
	}
	var block string
	stop := "end_turn"
	switch {
	case !hasBash:
		// A side call (a title, a summary): plain text.
		block = `{"type":"text","text":"ok"}`
	case len(results) < len(m.cmds):
		n := len(results)
		input, _ := json.Marshal(map[string]string{"command": m.cmds[n], "description": "gatehouse test"})
		block = fmt.Sprintf(`{"type":"tool_use","id":"toolu_01GatehouseMock%010d","name":"Bash","input":%s}`, n+1, input)
		stop = "tool_use"
	default:
		m.mu.Lock()
		m.results = results
		m.mu.Unlock()
		block = `{"type":"text","text":"done"}`
	}
	if body.Stream {
		streamMessage(w, block, stop)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"msg_gatehouse_mock","type":"message","role":"assistant","model":"claude-mock","content":[%s],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":10}}`, block, stop)
}

// toolResults are the tool_result blocks of one user message.
func toolResults(role string, content json.RawMessage) []toolResult {
	if role != "user" {
		return nil
	}
	var blocks []struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Content   json.RawMessage `json:"content"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return nil // a plain string
	}
	var out []toolResult
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		out = append(out, toolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Content: resultText(b.Content)})
	}
	return out
}

// resultText is a tool_result's content as text: a string, or its text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// streamMessage writes one assistant message as the API streams it (SSE):
// message_start, the block's start, one delta, stop, message_delta, message_stop.
func streamMessage(w http.ResponseWriter, block, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var head struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Input json.RawMessage `json:"input"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
	}
	_ = json.Unmarshal([]byte(block), &head)
	var start, delta string
	if head.Type == "tool_use" {
		start = fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":{}}`, head.ID, head.Name)
		partial, _ := json.Marshal(string(head.Input))
		delta = fmt.Sprintf(`{"type":"input_json_delta","partial_json":%s}`, partial)
	} else {
		start = `{"type":"text","text":""}`
		text, _ := json.Marshal(head.Text)
		delta = fmt.Sprintf(`{"type":"text_delta","text":%s}`, text)
	}
	events := []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"id":"msg_gatehouse_mock","type":"message","role":"assistant","model":"claude-mock","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":` + start + `}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":` + delta + `}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":10}}`, stop)},
		{"message_stop", `{"type":"message_stop"}`},
	}
	for _, e := range events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// finalResults are the tool results the model saw when it ended the turn.
func (m *anthropicMock) finalResults() []toolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]toolResult(nil), m.results...)
}

// seen lists the API calls the mock answered, for a failing test's log.
func (m *anthropicMock) seen() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.paths, ", ")
}
