package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// agentEnv names the recorded agent (a fixture prefix: claude-agent-acp,
// codex-acp, gemini-cli) the test binary plays when it runs as the fake agent.
const agentEnv = "GATEHOUSE_TEST_ACP_AGENT"

// fakeAgent plays one ACP agent with the recorded shapes of the named agent:
// its initialize result, its session ids, and its session/request_permission
// (ids as it numbers them: 0, 1, … for Claude and Gemini, the same numbers
// as the client's own; UUID strings for Codex), one per session/prompt.
// It says what answer it got in an agent_message_chunk ("outcome …") and
// ends the turn as the real agent does: a reject ends Codex's turn
// cancelled, a cancelled outcome ends every agent's. A prompt "exit N" makes
// it exit with N at once; a prompt "say TEXT" asks nothing: it says
// "Looking.", makes a tool call, then says TEXT in two chunks and ends the
// turn end_turn. Like the real Codex, the Codex fake does not exit
// when its stdin closes.
func fakeAgent(prefix string, stdin io.Reader, stdout io.Writer) int {
	initResult, err := recordedInitialize(prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake agent:", err)
		return 3
	}
	var template struct {
		ID     json.RawMessage `json:"id"`
		Params map[string]json.RawMessage
	}
	raw, err := os.ReadFile("testdata/" + prefix + "-request-permission.json")
	if err != nil || json.Unmarshal(raw, &template) != nil {
		fmt.Fprintln(os.Stderr, "fake agent: no request-permission fixture for", prefix)
		return 3
	}
	var recordedSession string
	_ = json.Unmarshal(template.Params["sessionId"], &recordedSession)
	out := json.NewEncoder(stdout)
	type prompt struct {
		id      json.RawMessage
		session string
	}
	asked := map[string]prompt{} // our permission request id -> the prompt it belongs to
	cancelled := map[string]bool{}
	sessions, next := 0, 0
	fmt.Fprintln(os.Stderr, "fake agent", prefix, "started") // stderr passes through
	in := bufio.NewReader(stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			if prefix == "codex-acp" {
				select {} // ends only with a signal
			}
			code, _ := strconv.Atoi(os.Getenv("GATEHOUSE_TEST_ACP_EXIT"))
			return code
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		var p struct {
			SessionID string `json:"sessionId"`
			Prompt    []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "initialize":
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": initResult})
		case "session/new":
			sessions++
			sid := recordedSession
			if sessions > 1 {
				sid = fmt.Sprintf("%s-%d", recordedSession, sessions)
			}
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]string{"sessionId": sid}})
		case "session/prompt":
			text := ""
			if len(p.Prompt) > 0 {
				text = p.Prompt[0].Text
			}
			if n, ok := strings.CutPrefix(text, "exit "); ok {
				code, _ := strconv.Atoi(n)
				return code
			}
			if say, ok := strings.CutPrefix(text, "say "); ok {
				update := func(u map[string]any) {
					_ = out.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": p.SessionID, "update": u}})
				}
				chunk := func(s string) {
					update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": s}})
				}
				chunk("Looking.")
				update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "call_say", "title": "Read", "kind": "read", "status": "completed"})
				half := len(say) / 2
				chunk(say[:half])
				chunk(say[half:])
				_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]string{"stopReason": "end_turn"}})
				continue
			}
			params := map[string]json.RawMessage{}
			for k, v := range template.Params {
				params[k] = v
			}
			params["sessionId"], _ = json.Marshal(p.SessionID)
			var id any = next
			if prefix == "codex-acp" {
				id = fmt.Sprintf("7b7c969e-c77f-41e2-a362-%012d", next)
			}
			next++
			idRaw, _ := json.Marshal(id)
			asked[string(idRaw)] = prompt{id: m.ID, session: p.SessionID}
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": params})
		case "session/cancel":
			cancelled[p.SessionID] = true
		case "":
			pr, ok := asked[string(m.ID)]
			if !ok {
				continue // an answer to nothing we asked: ignored, as the agents do
			}
			delete(asked, string(m.ID))
			var r struct {
				Outcome struct {
					Outcome  string `json:"outcome"`
					OptionID string `json:"optionId"`
				} `json:"outcome"`
			}
			_ = json.Unmarshal(m.Result, &r)
			text := strings.TrimSpace("outcome " + r.Outcome.Outcome + " " + r.Outcome.OptionID)
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
				"sessionId": pr.session, "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": text}},
			}})
			stop := "end_turn"
			if r.Outcome.Outcome != "selected" || cancelled[pr.session] || (prefix == "codex-acp" && r.Outcome.OptionID == "abort") {
				stop = "cancelled"
			}
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": pr.id, "result": map[string]string{"stopReason": stop}})
		}
	}
}

// recordedInitialize is the agent's initialize result in its allow recording.
func recordedInitialize(prefix string) (json.RawMessage, error) {
	f, err := os.Open("testdata/" + prefix + "-allow.jsonl")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Dir string `json:"dir"`
			Msg struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			} `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Dir == "agent->client" && len(e.Msg.Result) > 0 && strings.Contains(string(e.Msg.Result), `"agentInfo"`) {
			return e.Msg.Result, nil
		}
	}
	return nil, fmt.Errorf("no initialize result in %s", f.Name())
}
