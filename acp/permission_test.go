package acp_test

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/api"
)

// recordedPermission reads one agent's recorded session/request_permission.
func recordedPermission(t *testing.T, prefix string) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + prefix + "-request-permission.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Params
}

// TestParsePermission files each recorded agent's permission request and
// checks what the operator's card is made of.
func TestParsePermission(t *testing.T) {
	zed := acp.Who{Editor: "zed", EditorVersion: "0.999.0", Cwd: "/home/dev/project"}
	tests := []struct {
		prefix, agent, version, session, toolCall string
		command                                   string
		options                                   []api.Option
		agentOptions                              map[string]string
		reject                                    string
	}{
		{
			prefix: "claude-agent-acp", agent: "@zed-industries/claude-agent-acp", version: "0.23.1",
			session: "22eaeab2-8e40-452a-8ead-12cb2179e1fe", toolCall: "toolu_01MockApiBashPush00000001",
			command: "git push origin main", // rawInput.command
			options: []api.Option{
				{ID: "allow_always", Label: "Always Allow", Effect: "allow", Remember: &api.RememberOffer{Scope: "session", For: "until_revoked"}},
				{ID: "allow_once", Label: "Allow", Effect: "allow"},
				{ID: "reject_once", Label: "Reject", Effect: "deny"},
			},
			agentOptions: map[string]string{"allow_always": "allow", "allow_once": "allow", "reject_once": "reject"},
			reject:       "reject",
		},
		{
			prefix: "codex-acp", agent: "codex-acp", version: "0.16.0",
			session: "01a23c5f-4199-7581-aadf-da66873cbf85", toolCall: "call_MockApiShell000000000001",
			command: "git push origin main", // rawInput.command is an argv [/bin/bash -lc SCRIPT]: the script
			options: []api.Option{
				{ID: "allow_once", Label: "Yes, proceed", Effect: "allow"},
				{ID: "allow_always", Label: "Yes, and don't ask again for commands that start with `git push origin main`", Effect: "allow", Remember: &api.RememberOffer{Scope: "session", For: "until_revoked"}},
				{ID: "reject_once", Label: "No, and tell Codex what to do differently", Effect: "deny"},
			},
			agentOptions: map[string]string{"allow_once": "approved", "allow_always": "approved", "reject_once": "abort"},
			reject:       "abort",
		},
		{
			prefix: "gemini-cli", agent: "gemini-cli", version: "0.61.0",
			session: "68c6ca22-6e47-4625-9e9e-999e194523b1", toolCall: "run_shell_command__run_shell_command_1796309228512_0",
			command: "git push origin main", // no rawInput: the title, which never determines a call to remember
			options: []api.Option{
				{ID: "allow_once", Label: "Allow", Effect: "allow"},
				{ID: "reject_once", Label: "Reject", Effect: "deny"},
			},
			agentOptions: map[string]string{"allow_once": "proceed_once", "reject_once": "cancel"},
			reject:       "cancel",
		},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			who := zed
			who.Agent, who.AgentVersion = tt.agent, tt.version
			p, err := acp.ParsePermission(recordedPermission(t, tt.prefix), who)
			if err != nil {
				t.Fatal(err)
			}
			n := p.Request
			if n.Kind != "permission" || n.Tool != "shell" || n.Command != tt.command {
				t.Errorf("kind %q tool %q command %q; want permission, shell, %q", n.Kind, n.Tool, n.Command, tt.command)
			}
			if want := "Run: " + tt.command; n.Title != want {
				t.Errorf("title %q, want %q", n.Title, want)
			}
			if !reflect.DeepEqual(n.Options, tt.options) {
				t.Errorf("options %+v\nwant %+v", n.Options, tt.options)
			}
			if !reflect.DeepEqual(p.AgentOption, tt.agentOptions) || p.Reject != tt.reject {
				t.Errorf("agent options %v reject %q; want %v %q", p.AgentOption, p.Reject, tt.agentOptions, tt.reject)
			}
			wantRef := map[string]string{
				"session": tt.session, "tool_call": tt.toolCall, "tool_kind": "execute", "cwd": "/home/dev/project",
				"agent": tt.agent, "agent_version": tt.version, "editor": "zed", "editor_version": "0.999.0",
			}
			if !reflect.DeepEqual(n.SourceRef, wantRef) || n.Source != "session" {
				t.Errorf("source %q ref %v\nwant session %v", n.Source, n.SourceRef, wantRef)
			}
			if !strings.HasPrefix(n.Summary, tt.agent+" asks to run") || !strings.Contains(n.Summary, "in /home/dev/project") || !strings.Contains(n.Summary, "from zed") {
				t.Errorf("summary %q names no agent, cwd or editor", n.Summary)
			}
			if !strings.Contains(n.Detail, `"toolCallId": "`+tt.toolCall+`"`) {
				t.Errorf("detail lacks the tool call:\n%s", n.Detail)
			}
			if n.Sealed != nil && !*n.Sealed {
				t.Errorf("filed unsealed: the agent could edit what the operator decides")
			}
		})
	}

	t.Run("gemini's content and codex's reason reach the detail", func(t *testing.T) {
		g, _ := acp.ParsePermission(recordedPermission(t, "gemini-cli"), zed)
		if !strings.HasPrefix(g.Request.Detail, "[current working directory /home/dev/project] (push)\n") {
			t.Errorf("gemini detail starts %q", g.Request.Detail[:60])
		}
		c, _ := acp.ParsePermission(recordedPermission(t, "codex-acp"), zed)
		if !strings.HasPrefix(c.Request.Detail, "Pushing needs to write outside the workspace.") {
			t.Errorf("codex detail starts %q", c.Request.Detail[:60])
		}
	})

	t.Run("codex's own cwd wins over the session's", func(t *testing.T) {
		who := zed
		who.Cwd = "/somewhere/else"
		c, _ := acp.ParsePermission(recordedPermission(t, "codex-acp"), who)
		if c.Request.SourceRef["cwd"] != "/home/dev/project" {
			t.Errorf("cwd %q, want rawInput's", c.Request.SourceRef["cwd"])
		}
	})

	t.Run("unknown option kinds are not offered, and nothing known is not filed", func(t *testing.T) {
		p, err := acp.ParsePermission(json.RawMessage(`{"sessionId":"s","toolCall":{"toolCallId":"c","title":"x","kind":"edit","locations":[{"path":"/a/b","line":3}]},
			"options":[{"optionId":"o1","name":"Allow","kind":"allow_once"},{"optionId":"o2","name":"Maybe","kind":"perhaps"}]}`), zed)
		if err != nil || len(p.Request.Options) != 1 || p.Request.Options[0].ID != "allow_once" || p.Reject != "" {
			t.Fatalf("got %+v %v", p, err)
		}
		if p.Request.Title != "Edit: x" || p.Request.Tool != "edit" || !strings.Contains(p.Request.Detail, "at /a/b:3") {
			t.Errorf("title %q tool %q detail %q", p.Request.Title, p.Request.Tool, p.Request.Detail)
		}
		if _, err := acp.ParsePermission(json.RawMessage(`{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"o","kind":"perhaps"}]}`), zed); err == nil {
			t.Fatal("filed a request with no option of a known kind")
		}
	})

	t.Run("control and bidi characters are shown replaced, the command is kept as sent", func(t *testing.T) {
		p, err := acp.ParsePermission(json.RawMessage(`{"sessionId":"s","toolCall":{"toolCallId":"c","title":"rm\u202e -rf","kind":"execute","rawInput":{"command":"echo a\nrm -rf /"}},
			"options":[{"optionId":"o1","name":"Allow\u0007","kind":"allow_once"}]}`), zed)
		if err != nil {
			t.Fatal(err)
		}
		if p.Request.Command != "echo a\nrm -rf /" || p.Request.Title != "Run: echo a rm -rf /" || p.Request.Options[0].Label != "Allow\uFFFD" {
			t.Errorf("command %q title %q label %q", p.Request.Command, p.Request.Title, p.Request.Options[0].Label)
		}
	})
}

// TestRecordedIDsCollide checks the recordings show what the relay must
// handle: Claude's and Gemini's permission request reuses an id the client
// used for its own request, and Codex's is a string.
func TestRecordedIDsCollide(t *testing.T) {
	for prefix, want := range map[string]string{"claude-agent-acp": "0", "gemini-cli": "0", "codex-acp": `"7b7c969e-c77f-41e2-a362-e93c78ca8dbf"`} {
		t.Run(prefix, func(t *testing.T) {
			f, err := os.Open("testdata/" + prefix + "-allow.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			clientIDs := map[string]bool{}
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var e struct {
					Dir string `json:"dir"`
					Msg struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					} `json:"msg"`
				}
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatal(err)
				}
				if e.Dir == "client->agent" && e.Msg.Method != "" && len(e.Msg.ID) > 0 {
					clientIDs[string(e.Msg.ID)] = true
				}
				if e.Dir == "agent->client" && e.Msg.Method == acp.MethodRequestPermission {
					if string(e.Msg.ID) != want {
						t.Fatalf("permission request id %s, want %s", e.Msg.ID, want)
					}
					if collides := clientIDs[want]; collides != (want == "0") {
						t.Fatalf("id %s collides with the client's: %v", want, collides)
					}
					return
				}
			}
			t.Fatal("no permission request in the recording")
		})
	}
}
