package hookanswer_test

import (
	"os"
	"testing"

	"github.com/gatehousehq/gatehouse/hookanswer"
)

// TestClaudeCodeRecordedSessionEvents: each Notification and SubagentStop the
// interactive CLI sent (cmd/gatehouse/testdata/claude-code) is a session event
// and says what docs/attention.md gives it: a permission_prompt or
// elicitation_dialog waits with its own message, an idle_prompt waits keeping
// the last one, a subagent's stop moves the session on, and other
// notifications say nothing of the session.
func TestClaudeCodeRecordedSessionEvents(t *testing.T) {
	for _, c := range []struct {
		name, event, message string
		ok                   bool
	}{
		{"notification-permission-prompt.json", "waiting", "Claude needs your permission", true},
		{"notification-elicitation-dialog.json", "waiting", "Claude Code needs your input", true},
		{"notification-idle-prompt.json", "waiting", "", true},
		{"subagentstop.json", "moved", "", true},
		{"notification-elicitation-response.json", "", "", false},
		{"notification-agent-needs-input.json", "waiting", "Auto mode can't check actions in this session and needs your choice", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile("../cmd/gatehouse/testdata/claude-code/" + c.name)
			if err != nil {
				t.Fatal(err)
			}
			if !hookanswer.IsClaudeCodeSessionEvent(b) {
				t.Fatal("not taken for a session event")
			}
			in, err := hookanswer.ParseClaudeCodeSession(b)
			if err != nil {
				t.Fatal(err)
			}
			e, ok := in.Event("m")
			if ok != c.ok || (ok && (e.Event != c.event || e.Message != c.message || e.Session == "" || e.Cwd != "/home/dev/proj" || e.Prompt != "")) {
				t.Fatalf("event %+v (%v), want %q with message %q (%v)", e, ok, c.event, c.message, c.ok)
			}
		})
	}
}
