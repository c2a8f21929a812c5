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

// The model APIs the real ACP agents talk to, on 127.0.0.1. Each plays a
// model that asks for one shell command per conversation and, once handed its
// result (or its refusal), says "done"; an agent process serves several
// sessions, so the mocks read which turn it is from the conversation itself.
// (The Anthropic Messages mock for claude-agent-acp is anthropic_mock_test.go.)

// acpResponsesMock is the OpenAI Responses API (POST /v1/responses, streamed)
// for codex-acp. Its model asks to run the command outside the sandbox
// (require_escalated): codex-acp ships no sandbox on Linux, so only such a
// call reaches the approval. A call of Codex's approval reviewer (a
// sub-agent) is refused, so nothing but the editor approves.
type acpResponsesMock struct {
	URL     string
	command string

	mu      sync.Mutex
	outputs []string // function_call_output texts
	paths   []string
}

func newACPResponsesMock(t *testing.T, command string) *acpResponsesMock {
	m := &acpResponsesMock{command: command}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

func (m *acpResponsesMock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	m.mu.Lock()
	m.paths = append(m.paths, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
		ClientMetadata map[string]string `json:"client_metadata"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.ClientMetadata["x-openai-subagent"] != "" {
		http.Error(w, `{"error":{"message":"the mock never reviews approvals","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	const callID = "call_GatehouseACPMock0000001"
	var item any
	answered := false
	for _, in := range req.Input {
		if in.Type == "function_call_output" && in.CallID == callID {
			answered = true
			m.mu.Lock()
			m.outputs = append(m.outputs, string(in.Output))
			m.mu.Unlock()
		}
	}
	if answered {
		item = map[string]any{"type": "message", "role": "assistant", "id": "msg_mock2",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	} else {
		args, _ := json.Marshal(map[string]string{"cmd": m.command,
			"justification": "The command writes a file.", "sandbox_permissions": "require_escalated"})
		item = map[string]any{"type": "function_call", "id": "fc_mock1", "name": "exec_command", "arguments": string(args), "call_id": callID}
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

func (m *acpResponsesMock) seen() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.paths, ", ")
}

// geminiMock is the Gemini API (generateContent and streamGenerateContent,
// under GOOGLE_GEMINI_BASE_URL) for Gemini CLI. Besides the turn itself,
// Gemini CLI asks the model to rate each prompt's complexity (a JSON object
// with complexity_score 1-100) to pick a model: that call gets a score.
type geminiMock struct {
	URL     string
	command string

	mu        sync.Mutex
	responses []string // functionResponse payloads the model was handed
	paths     []string
}

func newGeminiMock(t *testing.T, command string) *geminiMock {
	m := &geminiMock{command: command}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// geminiRequest is what the mock reads of a generateContent call.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string          `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func (m *geminiMock) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	m.mu.Lock()
	m.paths = append(m.paths, r.Method+" "+r.URL.Path)
	m.mu.Unlock()
	stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if r.Method != http.MethodPost || !(stream || strings.HasSuffix(r.URL.Path, ":generateContent")) {
		http.Error(w, `{"error":{"code":404,"message":"not here","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"code":400,"message":"bad json","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	hasShell := false
	for _, tl := range req.Tools {
		for _, fd := range tl.FunctionDeclarations {
			hasShell = hasShell || fd.Name == "run_shell_command"
		}
	}
	var responses []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 {
				responses = append(responses, string(p.FunctionResponse))
			}
		}
	}
	var part any
	switch {
	case !hasShell && strings.Contains(string(body), "complexity_score"):
		part = map[string]any{"text": `{"complexity_reasoning":"One shell command.","complexity_score":20}`}
	case !hasShell:
		part = map[string]any{"text": "ok"} // a side call
	case len(responses) == 0:
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": m.command, "description": "gatehouse test"}}}
	default:
		m.mu.Lock()
		m.responses = append(m.responses, responses...)
		m.mu.Unlock()
		part = map[string]any{"text": "done"}
	}
	resp, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-mock",
	})
	if stream {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", resp)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(resp)
}

func (m *geminiMock) seen() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.paths, ", ")
}
