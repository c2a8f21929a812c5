package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACPCommand checks `gatehouse acp`'s flags and exit codes; the bridge
// itself is tested in the acp package, and with the real agents in
// TestRealACPBridge.
func TestACPCommand(t *testing.T) {
	acpRun := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"acp", "--url", "http://127.0.0.1:1"}, args...), strings.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no agent", nil, "gatehouse acp: the agent to run is missing"},
		{"a timeout under a second", []string{"--timeout", "10ms", "--", "true"}, "--timeout must be at least 1s"},
		{"a prompt file without --headless", []string{"--prompt-file", "p.txt", "--", "true"}, "--prompt-file goes with --headless"},
		{"an empty headless prompt", []string{"--headless", "--", "true"}, "the prompt is empty"},
		{"a reply wait without --headless", []string{"--wait-reply", "1m", "--", "true"}, "--wait-reply goes with --headless"},
		{"a negative reply wait", []string{"--headless", "--wait-reply", "-1s", "--", "true"}, "--wait-reply must not be negative"},
	} {
		t.Run(c.name+" is a usage error", func(t *testing.T) {
			code, _, stderr := acpRun("", c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
		})
	}

	t.Run("the agent's exit code is the bridge's", func(t *testing.T) {
		if code, _, stderr := acpRun("", "--", "sh", "-c", "echo agent-stderr >&2; exit 5"); code != 5 || !strings.Contains(stderr, "agent-stderr") {
			t.Fatalf("exit %d, stderr %q; want 5 and the agent's stderr passed through", code, stderr)
		}
	})

	t.Run("an agent that cannot start is 127", func(t *testing.T) {
		if code, _, stderr := acpRun("", "--", filepath.Join(t.TempDir(), "no-such-agent")); code != 127 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("a headless run whose agent ends before the turn is not 0", func(t *testing.T) {
		prompt := filepath.Join(t.TempDir(), "prompt.txt")
		if err := os.WriteFile(prompt, []byte("run the command\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := acpRun("", "--headless", "--prompt-file", prompt, "--", "sh", "-c", "exit 0"); code != 1 || !strings.Contains(stderr, "initialize") {
			t.Fatalf("exit %d, stderr %q; want 1", code, stderr)
		}
	})
}
