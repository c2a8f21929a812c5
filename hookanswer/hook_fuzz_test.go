package hookanswer_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehousehq/gatehouse/hookanswer"
)

// seedHooks adds the recorded hook inputs (testdata/hooks, copied from the real
// CLIs' fixtures) whose names start with prefix.
func seedHooks(f *testing.F, prefix string) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "hooks", prefix+"*.json"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no %s hook fixtures: %v", prefix, err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"not an object"}`))
	f.Add([]byte(`{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"\u202e/etc/passwd"}}`))
}

// FuzzParseClaudeCodeHook: any input is parsed or refused without a panic; a
// parsed one files a request with a bounded, valid title, re-parses to the same
// request after a round trip, and its fallback never allows.
func FuzzParseClaudeCodeHook(f *testing.F) {
	seedHooks(f, "claude-")
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := hookanswer.ParseClaudeCodeHook(bytes.NewReader(data))
		if err != nil {
			if in != nil {
				t.Fatalf("an error with an input: %v", err)
			}
			return
		}
		nr := in.NewRequest(time.Minute)
		checkTitle(t, nr.Title)
		again, err := hookanswer.ParseClaudeCodeHook(bytes.NewReader(marshal(t, in)))
		if err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
		// The idempotency key hashes the tool input's bytes as the CLI sent
		// them, which a re-encoding changes (spacing, escapes): not compared.
		if again.Title() != in.Title() || again.Command() != in.Command() {
			t.Fatalf("round trip changed the request: %q %q", again.Title(), in.Title())
		}
		if out := in.Fallback("no decision"); out != nil && strings.Contains(string(marshal(t, out)), `"allow"`) {
			t.Fatalf("the fallback allows: %s", marshal(t, out))
		}
	})
}

// FuzzParseCodexHook: the same for Codex's hook input.
func FuzzParseCodexHook(f *testing.F) {
	seedHooks(f, "codex-")
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := hookanswer.ParseCodexHook(bytes.NewReader(data))
		if err != nil {
			if in != nil {
				t.Fatalf("an error with an input: %v", err)
			}
			return
		}
		checkTitle(t, in.NewRequest(time.Minute).Title)
		again, err := hookanswer.ParseCodexHook(bytes.NewReader(marshal(t, in)))
		if err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
		if again.Title() != in.Title() || again.Command() != in.Command() {
			t.Fatalf("round trip changed the request: %q %q", again.Title(), in.Title())
		}
	})
}

func checkTitle(t *testing.T, title string) {
	t.Helper()
	if title == "" || len(title) > 500 {
		t.Fatalf("title of %d bytes", len(title))
	}
	if !utf8.ValidString(title) {
		t.Fatalf("title %q cuts a rune", title)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
