package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/hookanswer"
)

// sessionEventTimeout bounds the record of a session event: Claude Code waits
// on the hook, and a slow server must not hold the session up.
const sessionEventTimeout = 10 * time.Second

// runClaudeCodeSessionHook records one session event (Stop, Notification,
// UserPromptSubmit, SessionStart, SessionEnd, PostToolUse, SubagentStop) and
// exits 0 with no output: it never blocks, and a server that is down or
// refuses never fails the session (the trouble goes to stderr, which Claude
// Code shows only in its debug output). With waitReply on a Stop (and not
// stop_hook_active), it waits up to waitReply for the operator's answer on the
// session's waiting item and prints {"decision":"block","reason":ANSWER}, so
// Claude Code runs another turn with the answer as its next instruction.
func runClaudeCodeSessionHook(ctx context.Context, body []byte, url, token string, waitReply time.Duration, stdout, stderr io.Writer) int {
	in, err := hookanswer.ParseClaudeCodeSession(body)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse hook:", err)
		return 0
	}
	machine, _ := os.Hostname()
	e, ok := in.Event(machine)
	if !ok {
		return 0
	}
	if in.HookEventName != hookanswer.EventStop || in.StopHookActive {
		waitReply = 0
	}
	return reportSession(ctx, e, sessionEventTimeout, url, token, waitReply, "gatehouse hook", stdout, stderr)
}

// reportSession records a session event within budget and exits 0, printing
// nothing unless waitReply is set (a Stop that may continue): then it waits up
// to waitReply for the operator's answer on the session's waiting item and
// prints the Stop answer that continues the session with it.
func reportSession(ctx context.Context, e api.SessionEvent, budget time.Duration, url, token string, waitReply time.Duration, prefix string, stdout, stderr io.Writer) int {
	// Only a Stop this hook waits behind carries an answer back: its item alone takes one.
	e.CanReply = waitReply > 0
	c, err := newClient(url, token)
	if err != nil {
		fmt.Fprintln(stderr, prefix+":", err)
		return 0
	}
	rctx, cancel := context.WithTimeout(ctx, budget)
	got, err := c.SessionEvent(rctx, e)
	cancel()
	if err != nil {
		fmt.Fprintln(stderr, prefix+":", err)
		return 0
	}
	if waitReply <= 0 || got.Waiting == nil {
		return 0
	}
	wctx, cancel := context.WithTimeout(ctx, waitReply)
	defer cancel()
	r, err := c.WaitSettled(wctx, got.Waiting.ID)
	if err != nil {
		return 0 // no answer in time: the item stays open on the page
	}
	reply, ok := hookanswer.ReplyOf(r)
	if !ok {
		return 0
	}
	b, err := json.Marshal(hookanswer.StopAnswer{Decision: "block", Reason: reply})
	if err != nil {
		fmt.Fprintln(stderr, prefix+":", err)
		return 0
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

// claudeCodeSettings is the settings block --print-settings prints: the
// permission hook (PermissionRequest, as docs/agents.md installs it) and every
// session event, which takes no matcher; with waitReply, the Stop hook waits
// that long for a reply, and its timeout is longer.
func claudeCodeSettings(wait, waitReply time.Duration) map[string]any {
	cmd := "gatehouse hook claude-code"
	permission := map[string]any{"type": "command", "command": fmt.Sprintf("%s --timeout %s", cmd, wait), "timeout": int(wait.Seconds()) + 30}
	session := []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": int(sessionEventTimeout.Seconds()) + 5}}}}
	hooks := map[string]any{
		hookanswer.EventPermissionRequest: []any{map[string]any{"matcher": "*", "hooks": []any{permission}}},
	}
	for _, ev := range []string{hookanswer.EventNotification, hookanswer.EventStop, hookanswer.EventSubagentStop, hookanswer.EventUserPromptSubmit,
		hookanswer.EventSessionStart, hookanswer.EventSessionEnd, hookanswer.EventPostToolUse} {
		hooks[ev] = session
	}
	if waitReply > 0 {
		stop := map[string]any{"type": "command", "command": fmt.Sprintf("%s --wait-reply %s", cmd, waitReply), "timeout": int(waitReply.Seconds()) + 30}
		hooks[hookanswer.EventStop] = []any{map[string]any{"hooks": []any{stop}}}
	}
	return map[string]any{"hooks": hooks}
}

// movedOn tells Gatehouse the session of a decided permission moved on, which
// resolves its waiting item; trouble only goes to stderr.
func movedOn(ctx context.Context, c *client.Client, in *hookanswer.ClaudeCodeHookInput, stderr io.Writer) {
	if in.SessionID == "" {
		return
	}
	machine, _ := os.Hostname()
	rctx, cancel := context.WithTimeout(ctx, sessionEventTimeout)
	defer cancel()
	e := api.SessionEvent{Session: in.SessionID, Agent: hookanswer.AgentClaudeCode, Event: "moved", Machine: machine, Cwd: in.Cwd}
	if _, err := c.SessionEvent(rctx, e); err != nil {
		fmt.Fprintln(stderr, "gatehouse hook:", err)
	}
}
