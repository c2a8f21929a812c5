package main_test

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/models"
)

// TestRealClaudeCodeWaitReply runs the real Claude Code CLI with the settings
// `gatehouse hook claude-code --print-settings --wait-reply 2m` prints: the run
// ends its turn, its Stop files a waiting item carrying Claude's last message,
// the operator's reply reaches the model as the next instruction and Claude
// runs another turn; that turn's Stop (stop_hook_active) answers at once, and
// the session's end resolves what is left.
func TestRealClaudeCodeWaitReply(t *testing.T) {
	c := realClaude(t)
	g := newGatehouse(t)
	out, err := exec.Command(c.gatehouse, "hook", "claude-code", "--print-settings", "--wait-reply", "2m").Output()
	if err != nil {
		t.Fatalf("--print-settings: %v", err)
	}
	settings := strings.ReplaceAll(string(out), `"gatehouse hook claude-code`, `"`+c.gatehouse+` hook claude-code`)

	// The operator answers the first waiting item filed.
	sub := g.env.Changes.Subscribe(64)
	answered := make(chan *api.Request, 1)
	go func() {
		defer sub.Close()
		for ch := range sub.C {
			if ch.Action != "create" || ch.Record == nil || ch.Record.Kind != models.KindWaiting {
				continue
			}
			var r api.Request
			body := map[string]any{"version": ch.Version, "decision": nil, "answer": "Now tag the release"}
			if err := g.operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+ch.RequestID+"/decide", nil, body, &r); err != nil {
				t.Errorf("answer %s: %v", ch.RequestID, err)
			}
			answered <- &r
			return
		}
	}()

	model := modelmock.NewAnthropic(t) // no commands: it says "done" each turn
	res := c.runSettings(t, settings, model, g.env.URL, g.agent)
	res.check(t)
	first := <-answered
	if first.Detail != "done" || first.SourceRef["session"] == "" || first.Answer == nil {
		t.Fatalf("the first waiting item: %+v", first)
	}
	fed := false
	for _, p := range model.Prompts() {
		fed = fed || strings.Contains(p, "Stop hook feedback:\nNow tag the release")
	}
	if !fed {
		t.Fatalf("the reply never reached the model; prompts: %q\nstdout: %s\nstderr: %s", model.Prompts(), res.stdout, res.stderr)
	}

	// The second stop filed a new item at once; the end resolved it.
	var list api.List
	if err := g.operator.Do(context.Background(), http.MethodGet, "/v1/requests?status=all&kind=waiting", nil, nil, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Requests) != 2 {
		t.Fatalf("%d waiting items, want the answered one and the one the end resolved: %+v", len(list.Requests), list.Requests)
	}
	second := list.Requests[0] // newest first
	if second.ID == first.ID || second.Status != models.StatusResolved || second.DecidedVia == nil || *second.DecidedVia != models.ViaEnded {
		t.Fatalf("the second waiting item: %+v", second)
	}
	var sessions api.AgentSessions
	if err := g.operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &sessions); err != nil {
		t.Fatal(err)
	}
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].State != models.SessionEnded || sessions.Sessions[0].ID != first.SourceRef["session"] || sessions.Sessions[0].LastMessage != "done" {
		t.Fatalf("sessions: %+v", sessions)
	}
	g.settled(t)
}
