package modelmock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Anthropic is the Anthropic Messages API (POST /v1/messages, plain or
// streamed) for Claude Code. Its model asks for the Bash commands it was
// given, one per turn, then ends the turn; it records the tool results Claude
// Code sent back by then, so a test reads what the model was told.
type Anthropic struct {
	// URL is the base URL, for ANTHROPIC_BASE_URL.
	URL string
	calls

	cfg     AnthropicConfig
	mu      sync.Mutex
	results []ToolResult
	prompts []string
}

// AnthropicConfig is what an Anthropic mock's model does.
type AnthropicConfig struct {
	// Commands are the Bash commands the model asks for, one per turn.
	Commands []string
	// Description is the tool call's description ("gatehouse test" when
	// empty): the model's own words, whose size it chooses.
	Description string
	// Sent, when set, is called with a tool_use's id once its streamed
	// answer has been flushed to the client (a benchmark's start time).
	Sent func(id string)
}

// ToolResult is one tool_result block Claude Code sent the model.
type ToolResult struct {
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
	Content   string `json:"-"`
}

// NewAnthropic starts a mock whose model asks for cmds.
func NewAnthropic(t testing.TB, cmds ...string) *Anthropic {
	t.Helper()
	return StartAnthropic(t, AnthropicConfig{Commands: cmds})
}

// StartAnthropic starts a mock that does what cfg says.
func StartAnthropic(t testing.TB, cfg AnthropicConfig) *Anthropic {
	t.Helper()
	m := &Anthropic{cfg: cfg}
	m.URL = start(t, m.serve).URL
	return m
}

// FinalResults are the tool results the model saw when it ended the turn.
func (m *Anthropic) FinalResults() []ToolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ToolResult(nil), m.results...)
}

// Prompts are the texts of the last user message of each turn's call, in
// order: what Claude Code told the model to do next.
func (m *Anthropic) Prompts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.prompts...)
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

func (m *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	m.add(r)
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
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&body); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	hasBash := false
	for _, tl := range body.Tools {
		hasBash = hasBash || tl.Name == "Bash"
	}
	// The conversation's tool results so far say which turn this is.
	var results []ToolResult
	for _, msg := range body.Messages {
		results = append(results, toolResults(msg.Role, msg.Content)...)
	}
	// Claude Code may send system messages after the user's; the prompt is
	// the last user message.
	for i := len(body.Messages) - 1; hasBash && i >= 0; i-- {
		if body.Messages[i].Role == "user" {
			m.mu.Lock()
			m.prompts = append(m.prompts, partsText(body.Messages[i].Content))
			m.mu.Unlock()
			break
		}
	}
	var block, id string
	stop := "end_turn"
	switch {
	case !hasBash:
		// A side call (a title, a summary): plain text.
		block = `{"type":"text","text":"ok"}`
	case len(results) < len(m.cfg.Commands):
		n := len(results)
		id = fmt.Sprintf("toolu_01GatehouseMock%010d", n+1)
		desc := m.cfg.Description
		if desc == "" {
			desc = "gatehouse test"
		}
		input, _ := json.Marshal(map[string]string{"command": m.cfg.Commands[n], "description": desc})
		block = fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"Bash","input":%s}`, id, input)
		stop = "tool_use"
	default:
		m.mu.Lock()
		m.results = results
		m.mu.Unlock()
		block = `{"type":"text","text":"done"}`
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_gatehouse_mock","type":"message","role":"assistant","model":"claude-mock","content":[%s],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":10}}`, block, stop)
		return
	}
	streamMessage(w, block, stop)
	if id != "" && m.cfg.Sent != nil {
		m.cfg.Sent(id)
	}
}

// toolResults are the tool_result blocks of one user message.
func toolResults(role string, content json.RawMessage) []ToolResult {
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
	var out []ToolResult
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Content: partsText(b.Content)})
	}
	return out
}

// partsText is a tool result's content as text: a string, or its text parts.
func partsText(raw json.RawMessage) string {
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
