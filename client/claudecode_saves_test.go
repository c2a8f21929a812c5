package client_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/client"
)

func TestHookSaves(t *testing.T) {
	for name, tc := range map[string]struct {
		suggestions string
		want        string
	}{
		"a rule for the local project": {`[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push *"}],"behavior":"allow","destination":"localSettings"}]`,
			"Bash(git push *) to project settings (.claude/settings.local.json)"},
		"two rules, shared settings": {`[{"type":"addRules","rules":[{"toolName":"Read"},{"toolName":"Bash","ruleContent":"npm test"}],"behavior":"allow","destination":"projectSettings"}]`,
			"Read, Bash(npm test) to shared project settings (.claude/settings.json)"},
		"a mode and a directory": {`[{"type":"setMode","mode":"acceptEdits","destination":"localSettings"},{"type":"addDirectories","directories":["/srv"],"destination":"projectSettings"}]`,
			"permission mode acceptEdits to project settings (.claude/settings.local.json); access to /srv to shared project settings (.claude/settings.json)"},
	} {
		t.Run(name, func(t *testing.T) {
			in := &client.ClaudeCodeHookInput{HookEventName: client.EventPermissionRequest, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"git push"}`)}
			if err := json.Unmarshal([]byte(tc.suggestions), &in.PermissionSuggestions); err != nil {
				t.Fatal(err)
			}
			var got string
			for _, o := range in.NewRequest(time.Minute).Options {
				if o.ID == client.OptionProject {
					got = o.Saves
				} else if o.Saves != "" {
					t.Errorf("%s claims to save %q", o.ID, o.Saves)
				}
			}
			if got != tc.want {
				t.Errorf("saves = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("session suggestions save nothing to the project and offer no project option", func(t *testing.T) {
		in := &client.ClaudeCodeHookInput{HookEventName: client.EventPermissionRequest, ToolName: "Bash", ToolInput: json.RawMessage(`{}`)}
		_ = json.Unmarshal([]byte(`[{"type":"addRules","rules":[{"toolName":"Bash"}],"behavior":"allow","destination":"session"}]`), &in.PermissionSuggestions)
		for _, o := range in.NewRequest(time.Minute).Options {
			if o.ID == client.OptionProject || strings.Contains(o.Saves, "settings") {
				t.Fatalf("option %+v", o)
			}
		}
	})
}
