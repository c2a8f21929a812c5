package main_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/models"
)

// waiting waits for the next waiting item filed (permission filings are
// kept for of).
func (f *acpFilings) waiting(t *testing.T) *api.Request {
	t.Helper()
	for i, r := range f.backlog {
		if r.Kind == models.KindWaiting {
			f.backlog = append(f.backlog[:i:i], f.backlog[i+1:]...)
			return r
		}
	}
	timer := time.NewTimer(acpGuard)
	defer timer.Stop()
	for {
		select {
		case id := <-f.ids:
			r, err := f.g.operator.Get(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind == models.KindWaiting {
				return r
			}
			f.backlog = append(f.backlog, r)
		case <-timer.C:
			t.Fatalf("waited %s for a waiting item", acpGuard)
		}
	}
}

// agentSession is the session as the operator lists it.
func (g *gatehouse) agentSession(t *testing.T, id string) api.AgentSession {
	t.Helper()
	var list api.AgentSessions
	if err := g.operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, v := range list.Sessions {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no session %s in %+v", id, list.Sessions)
	return api.AgentSession{}
}

// settledVia waits for the item to settle and checks how.
func (g *gatehouse) settledVia(t *testing.T, r *api.Request, via string) *api.Request {
	t.Helper()
	got := g.settledAs(t, r, models.StatusResolved)
	if got.DecidedVia == nil || *got.DecidedVia != via {
		t.Fatalf("%s resolved via %v; want %s", r.ID, got.DecidedVia, via)
	}
	return got
}

// TestRealACPAttention runs claude-agent-acp (its mock model says "done" to
// every prompt and records each one) behind the built `gatehouse acp`, with
// a real Gatehouse. Behind an editor, a turn's end opens the session's
// waiting item with the agent's last message, which takes no reply, and the
// next prompt clears it. Headless with --wait-reply, the operator's answer
// reaches the model as the next prompt and the agent runs another turn.
func TestRealACPAttention(t *testing.T) {
	kit := realACP(t)
	bin := gatehousetest.Build(t)
	host, _ := os.Hostname()
	saysDone := func(model *modelmock.Anthropic) acpAgent {
		return acpAgent{name: "claude-agent-acp", start: func(t *testing.T, modules, home string) ([]string, []string, func() string) {
			return claudeACP(t, modules, home, model)
		}}
	}

	t.Run("attached: a turn's end opens the waiting item, the next prompt clears it, the agent's exit ends the session", func(t *testing.T) {
		g := newGatehouse(t)
		filings := watchFilings(t, g)
		model := modelmock.NewAnthropic(t)
		e := kit.bridgeEditor(t, saysDone(model), bin, g.env.URL, g.agent)
		s := e.newSession(t, "attention")
		e.send(t, map[string]any{"op": "prompt", "id": s.id, "text": "Say done"})
		if stop := e.stopReason(t, s); stop != "end_turn" {
			t.Fatalf("stop %q\n%s", stop, e.log())
		}
		ended := time.Now()
		w := filings.waiting(t)
		t.Logf("waiting item filed %s after the editor saw the turn end", time.Since(ended).Round(time.Millisecond))
		if w.Detail != "done" || w.SourceRef["session"] != s.sessionID || w.SourceRef["cwd"] != s.project ||
			w.SourceRef["machine"] != host || w.SourceRef["agent"] != "@zed-industries/claude-agent-acp" || w.AllowAnswer {
			t.Fatalf("waiting item %+v", w)
		}
		if v := g.agentSession(t, s.sessionID); v.State != models.SessionWaiting || v.LastMessage != "done" {
			t.Fatalf("session %+v", v)
		}
		e.send(t, map[string]any{"op": "prompt", "id": s.id, "text": "Go on"})
		g.settledVia(t, w, models.ViaMovedOn)
		if stop := e.stopReason(t, s); stop != "end_turn" {
			t.Fatalf("stop %q", stop)
		}
		w2 := filings.waiting(t)
		e.send(t, map[string]any{"op": "close"})
		e.waitExit(t)
		g.settledVia(t, w2, models.ViaEnded)
		if v := g.agentSession(t, s.sessionID); v.State != models.SessionEnded {
			t.Fatalf("session after the agent's exit %+v", v)
		}
	})

	t.Run("headless: the operator's answer is the next prompt and the agent runs another turn", func(t *testing.T) {
		g := newGatehouse(t)
		filings := watchFilings(t, g)
		model := modelmock.NewAnthropic(t)
		home := t.TempDir()
		tr, proxy := newTrap(t)
		argv, env, seen := claudeACP(t, kit.modules, home, model)
		project := filepath.Join(t.TempDir(), "project")
		if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*acpGuard)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"acp", "--headless", "--wait-reply", "10m", "--"}, argv...)...)
		cmd.Dir = project
		cmd.Env = acpEnv(home, proxy, append(env, "GATEHOUSE_URL="+g.env.URL, "GATEHOUSE_TOKEN="+g.agent)...)
		cmd.Stdin = strings.NewReader("Say done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

		w := filings.waiting(t)
		if w.Detail != "done" || !w.AllowAnswer || w.SourceRef["cwd"] != project {
			t.Fatalf("waiting item %+v", w)
		}
		const reply = "Now tag the release"
		body := map[string]any{"version": w.Version, "decision": nil, "answer": reply}
		if err := g.operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+w.ID+"/decide", nil, body, nil); err != nil {
			t.Fatal(err)
		}
		w2 := filings.waiting(t)
		prompts := model.Prompts()
		if len(prompts) < 2 || !strings.Contains(prompts[len(prompts)-1], reply) || strings.Contains(prompts[0], reply) {
			t.Fatalf("the model was prompted %q; want the answer as the last prompt", prompts)
		}
		if w2.ID == w.ID || w2.Detail != "done" || w2.SourceRef["session"] != w.SourceRef["session"] {
			t.Fatalf("the turn after the reply: %+v", w2)
		}
		if v := g.agentSession(t, w.SourceRef["session"]); v.State != models.SessionWaiting || v.WaitingID == nil || *v.WaitingID != w2.ID {
			t.Fatalf("session %+v; want it waiting on %s", v, w2.ID)
		}
		// Dismissed, the item continues nothing: the run ends, and the
		// agent's exit ends the session.
		if err := g.operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+w2.ID+"/dismiss", nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("gatehouse acp --headless: %v\nstderr:\n%s", err, stderr.String())
			}
		case <-ctx.Done():
			t.Fatalf("the headless run did not end after the dismissal; model calls: %s\nstderr:\n%s", seen(), stderr.String())
		}
		if !strings.Contains(stdout.String(), "[reply] "+reply) {
			t.Fatalf("stdout %q", stdout.String())
		}
		if v := g.agentSession(t, w.SourceRef["session"]); v.State != models.SessionEnded {
			t.Fatalf("session after the run %+v", v)
		}
		checkTrap(t, tr)
	})
}
