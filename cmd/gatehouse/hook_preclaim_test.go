package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// The agent can compute the hook's Idempotency-Key (session id, prompt and
// tool call are all in its reach). It files first under that key, with a field
// the hook would not set, and has that record allowed; the hook must not take
// that allow as the answer to what it files.
func TestHookPreclaimedKey(t *testing.T) {
	for _, event := range []string{preToolUse, permissionRequest} {
		t.Run(event, func(t *testing.T) {
			ts := newTestServer(t)
			in, err := hookanswer.ParseClaudeCodeHook(bytes.NewReader(fixture(t, event)))
			if err != nil {
				t.Fatal(err)
			}
			n := in.NewRequest(time.Minute)
			n.Risk = "low" // what a rule on risk would approve
			agent := client.New(ts.URL, ts.Agent)
			r, err := agent.File(context.Background(), n, in.IdempotencyKey())
			if err != nil {
				t.Fatal(err)
			}
			ts.decide(t, r.ID, "once", "")

			res := testkit.Recv(t, start(hookArgs(ts.URL, ts.Agent, "1m"), fixture(t, event)), "the hook to end")
			if strings.Contains(res.stdout, `"allow"`) {
				t.Fatalf("the hook allowed on the agent's pre-claimed record:\n%s\nstderr: %s", res.stdout, res.stderr)
			}
			if !strings.Contains(res.stderr, "idempotency_key_reused") {
				t.Fatalf("the hook did not say why it fell back: stdout %s stderr %s", res.stdout, res.stderr)
			}
		})
	}
}
