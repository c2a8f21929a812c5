//go:build !agent

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenNamesAndGroups(t *testing.T) {
	database := "sqlite:" + filepath.Join(t.TempDir(), "g.db")
	t.Run("an operator is made with groups and listed with them", func(t *testing.T) {
		if code, _ := runCmd(t, "token", "create", "--role", "operator", "--name", "alice", "--groups", "sre, release", "--database", database, "--create"); code != 0 {
			t.Fatalf("create alice: %d", code)
		}
		if code, _ := runCmd(t, "token", "create", "--role", "agent", "--name", "bot", "--for", "alice", "--database", database); code != 0 {
			t.Fatalf("create bot: %d", code)
		}
		code, list := runCmd(t, "token", "list", "--database", database)
		if code != 0 || !strings.Contains(list, "GROUPS") || !strings.Contains(list, "sre,release") {
			t.Fatalf("list: %d %s", code, list)
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, " bot ") && !strings.Contains(line, "alice") {
				t.Fatalf("bot's line does not say it acts for alice: %q", line)
			}
		}
	})
	t.Run("--for a name no operator has is refused, and nothing is made", func(t *testing.T) {
		code, stderr := runErr(t, "token", "create", "--role", "agent", "--name", "bot2", "--for", "nobody", "--database", database)
		if code != 1 || !strings.Contains(stderr, `"nobody" names no operator`) || !strings.Contains(stderr, "--role operator --name nobody") {
			t.Fatalf("--for nobody: %d %s", code, stderr)
		}
		if _, list := runCmd(t, "token", "list", "--database", database); strings.Contains(list, "bot2") {
			t.Fatalf("the refused token was made: %s", list)
		}
	})
	t.Run("a second live alice is refused with a clear message", func(t *testing.T) {
		code, stderr := runErr(t, "token", "create", "--role", "operator", "--name", "alice", "--database", database)
		if code != 1 || !strings.Contains(stderr, `live operator token named "alice" already exists`) {
			t.Fatalf("second alice: %d %s", code, stderr)
		}
	})
}
