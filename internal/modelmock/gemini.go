package modelmock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Gemini is the Gemini API (generateContent and streamGenerateContent, under
// GOOGLE_GEMINI_BASE_URL) for Gemini CLI. Its model asks for one
// run_shell_command per conversation. Besides the turn itself, Gemini CLI
// asks the model to rate each prompt's complexity (a JSON object with
// complexity_score 1-100) to pick a model: that call gets a score.
type Gemini struct {
	// URL is the base URL, for GOOGLE_GEMINI_BASE_URL.
	URL string
	calls

	command string
}

// NewGemini starts a mock whose model asks to run command.
func NewGemini(t testing.TB, command string) *Gemini {
	t.Helper()
	m := &Gemini{command: command}
	m.URL = start(t, m.serve).URL
	return m
}

// geminiBody is what the mock reads of a generateContent call.
type geminiBody struct {
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

func (m *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	m.add(r)
	stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if r.Method != http.MethodPost || !(stream || strings.HasSuffix(r.URL.Path, ":generateContent")) {
		http.Error(w, `{"error":{"code":404,"message":"not here","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	var req geminiBody
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
	// A function response in the conversation: the command was answered.
	answered := false
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			answered = answered || len(p.FunctionResponse) > 0
		}
	}
	var part any
	switch {
	case !hasShell && strings.Contains(string(body), "complexity_score"):
		part = map[string]any{"text": `{"complexity_reasoning":"One shell command.","complexity_score":20}`}
	case !hasShell:
		part = map[string]any{"text": "ok"} // a side call
	case !answered:
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": m.command, "description": "gatehouse test"}}}
	default:
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
