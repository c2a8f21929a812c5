//go:build !agent

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var linkCode = regexp.MustCompile(`^[A-Z2-9]{5}(-[A-Z2-9]{5}){3}\n$`)

// TestChatLinkCLI: `gatehouse chat link` prints a one-time code alone on
// stdout, through the API with an operator's token; an agent's token gets none.
func TestChatLinkCLI(t *testing.T) {
	base, _, database := startServe(t)
	code, op := runCmd(t, "token", "create", "--role", "operator", "--name", "alice", "--database", database)
	if code != 0 {
		t.Fatalf("token create: %d", code)
	}
	_, agent := runCmd(t, "token", "create", "--role", "agent", "--name", "bot", "--database", database)

	t.Run("an operator's token", func(t *testing.T) {
		code, out := runCmd(t, "chat", "link", "--url", base, "--token", strings.TrimSpace(op))
		if code != 0 || !linkCode.MatchString(out) {
			t.Fatalf("%d %q", code, out)
		}
	})
	t.Run("an agent's token", func(t *testing.T) {
		if code, out := runCmd(t, "chat", "link", "--url", base, "--token", strings.TrimSpace(agent)); code == 0 || out != "" {
			t.Fatalf("%d %q", code, out)
		}
	})
	t.Run("the database, naming the operator", func(t *testing.T) {
		if code, out := runCmd(t, "chat", "link", "--database", database, "--operator", "alice"); code != 0 || !linkCode.MatchString(out) {
			t.Fatalf("%d %q", code, out)
		}
		if code, _ := runCmd(t, "chat", "link", "--database", database); code != 2 {
			t.Fatalf("without --operator: %d", code)
		}
	})
}

// TestServeChatRefused: serve stops at once on a chat file it cannot use,
// naming the setting.
func TestServeChatRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "chat.yaml")
	if err := os.WriteFile(file, []byte("slack:\n  token_env: GH_NO_SUCH_TOKEN\n  signing_secret_env: GH_NO_SUCH_SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--database", "sqlite:" + t.TempDir() + "/g.db", "--chat", file}, nil, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "slack.token_env: environment variable GH_NO_SUCH_TOKEN is empty or unset") {
		t.Fatalf("%d %s", code, errb.String())
	}
}
