package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gatehousehq/gatehouse/hookanswer"
)

// codexSessionEndBudget bounds the record of Codex's SessionEnd: Codex cuts
// that hook's timeout to 3 s and would kill the hook first.
const codexSessionEndBudget = 2 * time.Second

// runCodexHook reads one Codex hook input. A PermissionRequest or PreToolUse
// asks the operator through Gatehouse and prints Codex's hook answer, or
// nothing; a session event (SessionStart, UserPromptSubmit, Stop, SessionEnd)
// is recorded and answered with nothing, or with --wait-reply on a Stop, the
// operator's reply. It never exits 2: to Codex, exit 2 is a deny; every other
// exit code, like printing nothing, is no decision, and Codex asks in its own
// way.
func runCodexHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("hook codex", stdout, stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "agent or runtime token")
	wait := fs.Duration("timeout", defaultHookWait, "how long to wait for the operator; keep it under the hook's own timeout")
	waitReply := fs.Duration("wait-reply", 0, "on a Stop, how long to wait for the operator's reply that continues the session (0: none); keep it under the hook's own timeout")
	printSettings := fs.Bool("print-settings", false, "print the Codex hooks.json that installs the hook for every event, and exit")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 1)
	}
	if *wait < time.Second {
		fmt.Fprintln(stderr, "gatehouse hook codex: --timeout must be at least 1s")
		return 1
	}
	if *waitReply < 0 {
		fmt.Fprintln(stderr, "gatehouse hook codex: --wait-reply must not be negative")
		return 1
	}
	if *printSettings {
		b, _ := json.MarshalIndent(codexSettings(*wait, *waitReply), "", "  ") // plain maps always marshal
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	body, err := io.ReadAll(io.LimitReader(stdin, 8<<20))
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook codex:", err)
		return 1
	}
	if hookanswer.IsCodexSessionEvent(body) {
		return runCodexSessionHook(ctx, body, *url, *token, *waitReply, stdout, stderr)
	}
	in, err := hookanswer.ParseCodexHook(bytes.NewReader(body))
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

// runCodexSessionHook records one of Codex's session events and exits 0 with
// no output, whatever became of it: a server that is down or refuses never
// fails the session. With waitReply on a Stop that no Stop hook continued yet
// (stop_hook_active false), it waits for the operator's reply and prints
// {"decision":"block","reason":ANSWER}; Codex hands the model the reason as
// its next instruction and runs another turn.
func runCodexSessionHook(ctx context.Context, body []byte, url, token string, waitReply time.Duration, stdout, stderr io.Writer) int {
	in, err := hookanswer.ParseCodexSession(body)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook codex:", err)
		return 0
	}
	machine, _ := os.Hostname()
	e, ok := in.Event(machine)
	if !ok {
		return 0
	}
	budget := sessionEventTimeout
	if in.HookEventName == hookanswer.EventSessionEnd {
		budget = codexSessionEndBudget
	}
	if in.HookEventName != hookanswer.EventStop || in.StopHookActive {
		waitReply = 0
	}
	return reportSession(ctx, e, budget, url, token, waitReply, "gatehouse hook codex", stdout, stderr)
}

// codexSettings is the hooks.json --print-settings prints: the permission hook
// (PermissionRequest on Bash, as docs/agents.md installs it) and every session
// event, which takes no matcher. SessionEnd's timeout is the 3 s Codex allows
// it; with waitReply, the Stop hook waits that long for a reply and its
// timeout is longer.
func codexSettings(wait, waitReply time.Duration) map[string]any {
	cmd := "gatehouse hook codex"
	entry := func(command string, timeout int) []any {
		return []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": timeout}}}}
	}
	permission := map[string]any{"type": "command", "command": fmt.Sprintf("%s --timeout %s", cmd, wait), "timeout": int(wait.Seconds()) + 30}
	session := int(sessionEventTimeout.Seconds()) + 5
	hooks := map[string]any{
		hookanswer.EventPermissionRequest: []any{map[string]any{"matcher": "Bash", "hooks": []any{permission}}},
		hookanswer.EventSessionStart:      entry(cmd, session),
		hookanswer.EventUserPromptSubmit:  entry(cmd, session),
		hookanswer.EventStop:              entry(cmd, session),
		hookanswer.EventSessionEnd:        entry(cmd, int((codexSessionEndBudget + time.Second).Seconds())),
	}
	if waitReply > 0 {
		hooks[hookanswer.EventStop] = entry(fmt.Sprintf("%s --wait-reply %s", cmd, waitReply), int(waitReply.Seconds())+30)
	}
	return map[string]any{"hooks": hooks}
}
