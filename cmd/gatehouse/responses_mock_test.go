package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// responsesMock is a stand-in for the OpenAI Responses API (POST /v1/responses,
// answered as server-sent events), on 127.0.0.1 only. Its model asks for one
// shell command with escalated permissions, then, once it is handed the
// command's result, says "done". A request from Codex's automatic approval
// reviewer (client_metadata x-openai-subagent "guardian") is refused, so the
// reviewer can never approve.
type responsesMock struct {
	URL     string
	command string

	mu      sync.Mutex
	outputs []string // function_call_output texts, in the order they came
	other   int      // requests of the approval reviewer
	got     chan string
}

const mockCallID = "call_MockApiShell000000000001"

func newResponsesMock(t *testing.T, command string) *responsesMock {
	t.Helper()
	m := &responsesMock{command: command, got: make(chan string, 16)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// request is what the mock reads of a Responses API call.
type request struct {
	Input []struct {
		Type   string          `json:"type"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
	ClientMetadata map[string]string `json:"client_metadata"`
}

func (m *responsesMock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.ClientMetadata["x-openai-subagent"] != "" {
		m.mu.Lock()
		m.other++
		m.mu.Unlock()
		http.Error(w, `{"error":{"message":"the mock never reviews approvals","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	output, answered := "", false
	for _, in := range req.Input {
		if in.Type == "function_call_output" && in.CallID == mockCallID {
			output, answered = outputText(in.Output), true
		}
	}
	var item any
	if answered {
		m.mu.Lock()
		m.outputs = append(m.outputs, output)
		m.mu.Unlock()
		m.got <- output
		item = map[string]any{"type": "message", "role": "assistant", "id": "msg_mock000002",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	} else {
		args, _ := json.Marshal(map[string]string{"cmd": m.command,
			"justification": "Pushing needs to write outside the workspace.", "sandbox_permissions": "require_escalated"})
		item = map[string]any{"type": "function_call", "id": "fc_mock000001", "name": "exec_command", "arguments": string(args), "call_id": mockCallID}
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

// outputText is a function_call_output's text: a string, or content parts.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out
}
