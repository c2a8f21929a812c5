package client_test

import (
	"os"
	"testing"

	"github.com/gatehousehq/gatehouse/client"
)

// TestUserPromptSubmitCarriesPrompt: Claude Code's recorded UserPromptSubmit
// moves the session on and carries what the user typed, which the server
// keeps (the last few) for the advisory reviewer; no other event carries one.
func TestUserPromptSubmitCarriesPrompt(t *testing.T) {
	for name, want := range map[string]string{"userpromptsubmit.json": "push the branch", "posttooluse-bash.json": "", "stop.json": ""} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile("../cmd/gatehouse/testdata/claude-code/" + name)
			if err != nil {
				t.Fatal(err)
			}
			in, err := client.ParseClaudeCodeSession(b)
			if err != nil {
				t.Fatal(err)
			}
			e, ok := in.Event("m")
			if !ok || e.Prompt != want {
				t.Fatalf("event %+v (%v), want prompt %q", e, ok, want)
			}
		})
	}
}
