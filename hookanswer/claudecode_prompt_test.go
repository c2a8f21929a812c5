package hookanswer_test

import (
	"os"
	"testing"

	"github.com/gatehousehq/gatehouse/hookanswer"
)

// TestUserPromptSubmitCarriesPrompt: Claude Code's (and Codex's) recorded UserPromptSubmit
// moves the session on and carries what the user typed, which the server
// keeps (the last few) for the advisory reviewer; no other event carries one.
func TestUserPromptSubmitCarriesPrompt(t *testing.T) {
	for name, want := range map[string]string{"userpromptsubmit.json": "push the branch", "posttooluse-bash.json": "", "stop.json": ""} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile("../cmd/gatehouse/testdata/claude-code/" + name)
			if err != nil {
				t.Fatal(err)
			}
			in, err := hookanswer.ParseClaudeCodeSession(b)
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

func TestCodexUserPromptSubmitCarriesPrompt(t *testing.T) {
	for name, want := range map[string]string{"userpromptsubmit.json": "say done", "stop.json": "", "sessionstart.json": ""} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile("../cmd/gatehouse/testdata/codex/" + name)
			if err != nil {
				t.Fatal(err)
			}
			in, err := hookanswer.ParseCodexSession(b)
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
