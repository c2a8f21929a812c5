package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/hookanswer"
)

// defaultHookWait is how long the hook waits for the operator. Claude Code's
// hook `timeout` must be longer (docs/agents.md), or it kills the hook first.
const defaultHookWait = 5 * time.Minute

// runClaudeCodeHook reads one PreToolUse or PermissionRequest input, asks the
// operator through Gatehouse, and prints the hook's JSON answer. It exits 0
// whenever it printed an answer or chose to print nothing; a non-zero exit is
// a non-blocking error to Claude Code, which then asks in its own way.
func runClaudeCodeHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("hook claude-code", stdout, stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "agent or runtime token")
	wait := fs.Duration("timeout", defaultHookWait, "how long to wait for the operator; keep it under the hook's own timeout")
	waitReply := fs.Duration("wait-reply", 0, "on a Stop, how long to wait for the operator's reply that continues the session (0: none); keep it under the hook's own timeout")
	printSettings := fs.Bool("print-settings", false, "print the Claude Code settings that install the hook for every event, and exit")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if *wait < time.Second {
		fmt.Fprintln(stderr, "gatehouse hook: --timeout must be at least 1s")
		return 2
	}
	if *waitReply < 0 {
		fmt.Fprintln(stderr, "gatehouse hook: --wait-reply must not be negative")
		return 2
	}
	if *printSettings {
		b, _ := json.MarshalIndent(claudeCodeSettings(*wait, *waitReply), "", "  ") // plain maps always marshal
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	body, err := io.ReadAll(io.LimitReader(stdin, 8<<20))
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook:", err)
		return 1
	}
	if hookanswer.IsClaudeCodeSessionEvent(body) {
		return runClaudeCodeSessionHook(ctx, body, *url, *token, *waitReply, stdout, stderr)
	}
	in, err := hookanswer.ParseClaudeCodeHook(bytes.NewReader(body))
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook:", err)
		return 1
	}
	c, err := newClient(*url, *token)
	if err != nil {
		// No answer: Claude Code asks in its own way.
		fmt.Fprintln(stderr, "gatehouse hook:", err)
		return 0
	}
	out, err := c.AnswerClaudeCodeHook(ctx, in, *wait)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook:", err)
	}
	if out == nil {
		return 0
	}
	if in.HookEventName == hookanswer.EventPermissionRequest {
		movedOn(ctx, c, in, stderr) // a decided permission: the session goes on
	}
	b, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}
