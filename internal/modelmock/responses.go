package modelmock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// Responses is the OpenAI Responses API (POST /v1/responses, answered as
// server-sent events) for Codex and codex-acp. Its model asks for one shell
// command outside the sandbox (require_escalated, so the call reaches the
// approval) and, once handed the command's result, says "done". A call of
// Codex's approval reviewer (a sub-agent, client_metadata
// x-openai-subagent) is refused, so the reviewer can never approve. With no
// command, its model says "done" to every call.
type Responses struct {
	// URL is the base URL; the API is under URL+"/v1".
	URL string
	calls

	command, justification string
	mu                     sync.Mutex
	outputs                []string // function_call_output texts, in the order they came
	prompts                []string // each call's last user message text
	reviews                int      // calls of the approval reviewer
}

// CallID is the id of the shell call the Responses model makes.
const CallID = "call_MockApiShell000000000001"

// NewResponses starts a mock whose model asks to run command, giving
// justification as its reason.
func NewResponses(t testing.TB, command, justification string) *Responses {
	t.Helper()
	m := &Responses{command: command, justification: justification}
	m.URL = start(t, m.serve).URL
	return m
}

// Outputs are the texts of the command results the model was handed.
func (m *Responses) Outputs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.outputs...)
}

// Prompts are the texts of the last user message of each call, in order:
// what Codex told the model to do next.
func (m *Responses) Prompts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.prompts...)
}

// Reviews counts the approval reviewer's calls the mock refused.
func (m *Responses) Reviews() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reviews
}

// responsesBody is what the mock reads of a Responses API call.
type responsesBody struct {
	Input []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		CallID  string          `json:"call_id"`
		Output  json.RawMessage `json:"output"`
	} `json:"input"`
	ClientMetadata map[string]string `json:"client_metadata"`
}

func (m *Responses) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	m.add(r)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req responsesBody
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.ClientMetadata["x-openai-subagent"] != "" {
		m.mu.Lock()
		m.reviews++
		m.mu.Unlock()
		http.Error(w, `{"error":{"message":"the mock never reviews approvals","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	answered, prompt := m.command == "", ""
	for _, in := range req.Input {
		if in.Type == "message" && in.Role == "user" {
			prompt = partsText(in.Content)
		}
		if in.Type == "function_call_output" && in.CallID == CallID {
			answered = true
			m.mu.Lock()
			m.outputs = append(m.outputs, partsText(in.Output))
			m.mu.Unlock()
		}
	}
	m.mu.Lock()
	m.prompts = append(m.prompts, prompt)
	m.mu.Unlock()
	var item any
	if answered {
		item = map[string]any{"type": "message", "role": "assistant", "id": "msg_mock000002",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	} else {
		args, _ := json.Marshal(map[string]string{"cmd": m.command,
			"justification": m.justification, "sandbox_permissions": "require_escalated"})
		item = map[string]any{"type": "function_call", "id": "fc_mock000001", "name": "exec_command", "arguments": string(args), "call_id": CallID}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	send(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_mock"}})
	send(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	send(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_mock",
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}})
}
