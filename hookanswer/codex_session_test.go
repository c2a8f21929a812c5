package hookanswer_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
)

func TestCodexSessionEvent(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       api.SessionEvent
		ok         bool
	}{
		{"stop", `{"session_id":"s","turn_id":"t","cwd":"/p","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}`,
			api.SessionEvent{Session: "s", Agent: "codex", Event: "waiting", Cwd: "/p", Machine: "m", Message: "done"}, true},
		{"stop with no message (null)", `{"session_id":"s","cwd":"/p","hook_event_name":"Stop","last_assistant_message":null}`,
			api.SessionEvent{Session: "s", Agent: "codex", Event: "waiting", Cwd: "/p", Machine: "m"}, true},
		{"prompt", `{"session_id":"s","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"go"}`,
			api.SessionEvent{Session: "s", Agent: "codex", Event: "moved", Cwd: "/p", Machine: "m", Prompt: "go"}, true},
		{"start", `{"session_id":"s","cwd":"/p","hook_event_name":"SessionStart","source":"resume"}`,
			api.SessionEvent{Session: "s", Agent: "codex", Event: "started", Cwd: "/p", Machine: "m"}, true},
		{"end", `{"session_id":"s","cwd":"/p","hook_event_name":"SessionEnd","reason":"other"}`,
			api.SessionEvent{Session: "s", Agent: "codex", Event: "ended", Cwd: "/p", Machine: "m"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !hookanswer.IsCodexSessionEvent([]byte(c.body)) {
				t.Fatal("not taken for a session event")
			}
			in, err := hookanswer.ParseCodexSession([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := in.Event("m")
			if ok != c.ok || got != c.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, c.want, c.ok)
			}
		})
	}
	t.Run("a tool call is not a session event", func(t *testing.T) {
		if hookanswer.IsCodexSessionEvent([]byte(`{"hook_event_name":"PermissionRequest"}`)) || hookanswer.IsCodexSessionEvent([]byte(`{"hook_event_name":"PostToolUse"}`)) {
			t.Fatal("taken for a session event")
		}
	})
	t.Run("no session_id is refused", func(t *testing.T) {
		if _, err := hookanswer.ParseCodexSession([]byte(`{"hook_event_name":"Stop"}`)); err == nil {
			t.Fatal("parsed")
		}
	})
}
