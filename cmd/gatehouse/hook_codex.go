package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/hookanswer"
)

// runCodexHook reads one Codex PermissionRequest or PreToolUse input, asks the
// operator through Gatehouse, and prints Codex's hook answer, or nothing. It
// never exits 2: to Codex, exit 2 is a deny; every other exit code, like
// printing nothing, is no decision, and Codex asks in its own way.
func runCodexHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("hook codex", stdout, stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "agent or runtime token")
	wait := fs.Duration("timeout", defaultHookWait, "how long to wait for the operator; keep it under the hook's own timeout")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 1)
	}
	if *wait < time.Second {
		fmt.Fprintln(stderr, "gatehouse hook codex: --timeout must be at least 1s")
		return 1
	}
	in, err := hookanswer.ParseCodexHook(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook codex:", err)
		return 1
	}
	c, err := newClient(*url, *token)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse hook codex: %v; Codex asks instead\n", err)
		return 0
	}
	out, err := c.AnswerCodexHook(ctx, in, *wait)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse hook codex: %v; Codex asks instead\n", err)
	}
	if out == nil {
		return 0
	}
	b, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook codex:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}
