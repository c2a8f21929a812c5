package modelmock_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// post sends body to url and returns the status and the answer.
func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAnthropic(t *testing.T) {
	sent := make(chan string, 1)
	m := modelmock.StartAnthropic(t, modelmock.AnthropicConfig{Commands: []string{"git init one"}, Sent: func(id string) { sent <- id }})
	tools := `"tools":[{"name":"Bash"}]`
	t.Run("the first turn asks for the command, streamed", func(t *testing.T) {
		_, got := post(t, m.URL+"/v1/messages", `{"stream":true,`+tools+`,"messages":[{"role":"user","content":"go"}]}`)
		if !strings.Contains(got, `git init one`) || !strings.Contains(got, "event: message_stop") {
			t.Fatalf("answer %q", got)
		}
		if id := testkit.Recv(t, sent, "the tool call's sent time"); !strings.Contains(got, id) {
			t.Fatalf("sent %q, not the answer's tool call", id)
		}
	})
	t.Run("a side call without tools gets text", func(t *testing.T) {
		if _, got := post(t, m.URL+"/v1/messages", `{"messages":[]}`); !strings.Contains(got, `"text":"ok"`) {
			t.Fatalf("answer %q", got)
		}
	})
	t.Run("with the result handed back the model ends the turn and keeps what it saw", func(t *testing.T) {
		_, got := post(t, m.URL+"/v1/messages", `{`+tools+`,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"denied"}]}]}]}`)
		res := m.FinalResults()
		if !strings.Contains(got, `"stop_reason":"end_turn"`) || len(res) != 1 || !res[0].IsError || res[0].Content != "denied" {
			t.Fatalf("answer %q, results %+v", got, res)
		}
	})
	if seen := m.Seen(); !strings.Contains(seen, "POST /v1/messages") {
		t.Fatalf("seen %q", seen)
	}
}

func TestResponses(t *testing.T) {
	m := modelmock.NewResponses(t, "git push", "Pushing needs the network.")
	t.Run("Codex's approval reviewer is refused", func(t *testing.T) {
		if code, _ := post(t, m.URL+"/v1/responses", `{"client_metadata":{"x-openai-subagent":"guardian"}}`); code != http.StatusBadRequest || m.Reviews() != 1 {
			t.Fatalf("status %d, reviews %d", code, m.Reviews())
		}
	})
	t.Run("the model asks for the command outside the sandbox", func(t *testing.T) {
		_, got := post(t, m.URL+"/v1/responses", `{"input":[]}`)
		if !strings.Contains(got, `require_escalated`) || !strings.Contains(got, modelmock.CallID) {
			t.Fatalf("answer %q", got)
		}
	})
	t.Run("handed the result, it says done and keeps the output", func(t *testing.T) {
		_, got := post(t, m.URL+"/v1/responses", `{"input":[{"type":"function_call_output","call_id":"`+modelmock.CallID+`","output":[{"text":"ok\n"}]}]}`)
		if out := m.Outputs(); !strings.Contains(got, `"done"`) || len(out) != 1 || out[0] != "ok\n" {
			t.Fatalf("answer %q, outputs %q", got, out)
		}
	})
}

func TestGemini(t *testing.T) {
	m := modelmock.NewGemini(t, "git init g")
	tools := `"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]`
	cases := []struct{ name, path, body, want string }{
		{"the complexity rating gets a score", ":generateContent", `{"contents":[{"parts":[{"text":"complexity_score"}]}]}`, `complexity_score`},
		{"the first turn asks for the command, streamed", ":streamGenerateContent", `{` + tools + `}`, `git init g`},
		{"handed the response, it says done", ":generateContent", `{` + tools + `,"contents":[{"parts":[{"functionResponse":{"name":"run_shell_command"}}]}]}`, `"text":"done"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, got := post(t, m.URL+"/v1beta/models/gemini-mock"+c.path, c.body); !strings.Contains(got, c.want) {
				t.Fatalf("answer %q, want %s", got, c.want)
			}
		})
	}
	if code, _ := post(t, m.URL+"/elsewhere", `{}`); code != http.StatusNotFound {
		t.Fatalf("an unknown path answered %d", code)
	}
}
