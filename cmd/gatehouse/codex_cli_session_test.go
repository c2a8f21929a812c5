package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
)

// codexHooks is the hooks.json `gatehouse hook codex --print-settings` prints
// with args, its commands pointed at the built binary, without the events
// named in drop.
func codexHooks(t *testing.T, bin string, args []string, drop ...string) []byte {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"hook", "codex", "--print-settings"}, args...)...).Output()
	if err != nil {
		t.Fatalf("--print-settings: %v", err)
	}
	var settings struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(out, &settings); err != nil {
		t.Fatal(err)
	}
	for _, ev := range drop {
		delete(settings.Hooks, ev)
	}
	b, _ := json.Marshal(settings)
	return []byte(strings.ReplaceAll(string(b), `"gatehouse hook codex`, `"`+bin+` hook codex`))
}

// TestRealCodexWaitReply runs the real Codex CLI with the hooks.json
// `gatehouse hook codex --print-settings --wait-reply 2m` prints: `codex exec`
// ends its turn, its Stop files a waiting item carrying Codex's last message,
// the operator's reply reaches the model as the next instruction and Codex
// runs another turn; that turn's Stop (stop_hook_active) files the new message
// and answers at once. The next prompt (`codex exec resume`) clears that item,
// and the session's end resolves what is left.
func TestRealCodexWaitReply(t *testing.T) {
	codex := os.Getenv(codexEnv)
	if codex == "" {
		testkit.Skipf(t, "%s is not set: the path to the Codex CLI (npm @openai/codex@0.169.0; .ci/run installs it)", codexEnv)
	}
	bin := gatehousetest.Build(t)
	ts := newTestServer(t)

	// The operator answers the first waiting item filed.
	sub := ts.Changes.Subscribe(64)
	answered := make(chan *api.Request, 1)
	go func() {
		defer sub.Close()
		for ch := range sub.C {
			if ch.Action != "create" || ch.Record == nil || ch.Record.Kind != models.KindWaiting {
				continue
			}
			var r api.Request
			body := map[string]any{"version": ch.Version, "decision": nil, "answer": "Now tag the release"}
			if err := ts.Operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+ch.RequestID+"/decide", nil, body, &r); err != nil {
				t.Errorf("answer %s: %v", ch.RequestID, err)
			}
			answered <- &r
			return
		}
	}()

	// The first run leaves SessionEnd out, so the item its last Stop files
	// is still open for the next prompt.
	mock := modelmock.NewResponses(t, "", "") // no command: it says "done" each turn
	home := newCodexHome(t, mock, codexHooks(t, bin, []string{"--wait-reply", "2m"}, "SessionEnd"))
	run := execCodex(t, codex, home, ts.URL, ts.Agent, "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
		"-C", filepath.Join(home, "project"), "say done")
	if run.err != nil {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}
	first := testkit.Recv(t, answered, "the operator's answer")
	session := first.SourceRef["session"]
	if first.Detail != "done" || session == "" || first.SourceRef["agent"] != "codex" || first.Answer == nil {
		t.Fatalf("the first waiting item: %+v", first)
	}
	fed := false
	for _, p := range mock.Prompts() {
		fed = fed || (strings.HasPrefix(p, "<hook_prompt ") && strings.HasSuffix(p, ">Now tag the release</hook_prompt>"))
	}
	if !fed || len(mock.Prompts()) != 2 {
		t.Fatalf("the reply did not reach the model as the next instruction of a second turn; prompts: %q\nstderr:\n%s", mock.Prompts(), run.stderr)
	}
	second := waitingItems(t, ts)[0] // newest first
	if second.ID == first.ID || second.Status != models.StatusOpen || second.Detail != "done" || second.SourceRef["session"] != session {
		t.Fatalf("the second waiting item: %+v", second)
	}

	// The next prompt, in the same session, moves it on; the end resolves the
	// item that prompt's turn left.
	write(t, filepath.Join(home, ".codex", "hooks.json"), codexHooks(t, bin, nil))
	run = execCodex(t, codex, home, ts.URL, ts.Agent, "exec", "resume", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", session, "now tag it")
	if run.err != nil {
		t.Fatalf("codex exec resume: %v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}
	items := waitingItems(t, ts)
	if len(items) != 3 {
		t.Fatalf("%d waiting items, want the answered one, the one the prompt moved on and the one the end resolved: %+v", len(items), items)
	}
	if got := items[1]; got.ID != second.ID || got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaMovedOn {
		t.Fatalf("after the next prompt: %+v", got)
	}
	if got := items[0]; got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaEnded || got.SourceRef["session"] != session {
		t.Fatalf("after the session's end: %+v", got)
	}
	var sessions api.AgentSessions
	if err := ts.Operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &sessions); err != nil {
		t.Fatal(err)
	}
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].ID != session || sessions.Sessions[0].State != models.SessionEnded || sessions.Sessions[0].Agent != "codex" {
		t.Fatalf("sessions: %+v", sessions)
	}
	checkNothingOpen(t, ts, bin, home)
}

// waitingItems are every waiting item, newest first.
func waitingItems(t *testing.T, ts *testServer) []api.Request {
	t.Helper()
	var list api.List
	if err := ts.Operator.Do(context.Background(), http.MethodGet, "/v1/requests?status=all&kind=waiting", nil, nil, &list); err != nil {
		t.Fatal(err)
	}
	return list.Requests
}
