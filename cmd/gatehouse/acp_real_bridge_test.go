package main_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models"
)

// acpFilings yields the requests the bridge files in a Gatehouse, each found
// by the ACP session it came from (its source_ref "session").
type acpFilings struct {
	g       *gatehouse
	ids     chan string
	backlog []*api.Request
}

// watchFilings subscribes before anything is filed, so no filing is missed.
func watchFilings(t *testing.T, g *gatehouse) *acpFilings {
	sub := g.env.Changes.Subscribe(64)
	t.Cleanup(sub.Close)
	f := &acpFilings{g: g, ids: make(chan string, 64)}
	go func() {
		for ch := range sub.C {
			if ch.Action == "create" {
				select {
				case f.ids <- ch.RequestID:
				default: // more filings than any test makes
				}
			}
		}
	}()
	return f
}

// of waits for the session's permission filing (its waiting items, filed
// under the same session, are left for waiting).
func (f *acpFilings) of(t *testing.T, s acpSession) *api.Request {
	t.Helper()
	for i, r := range f.backlog {
		if r.SourceRef["session"] == s.sessionID && r.Kind != models.KindWaiting {
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
			if r.SourceRef["session"] == s.sessionID && r.Kind != models.KindWaiting {
				return r
			}
			f.backlog = append(f.backlog, r)
		case <-timer.C:
			t.Fatalf("waited %s for the bridge to file %s's permission request", acpGuard, s.id)
		}
	}
}

// decide decides the filing as the operator, on the version filed.
func (g *gatehouse) decide(t *testing.T, r *api.Request, option string) {
	t.Helper()
	if _, err := g.operator.Decide(context.Background(), r.ID, r.Version, option, ""); err != nil {
		t.Fatalf("decide %s %s: %v", r.ID, option, err)
	}
}

// settledAs waits for the filing to leave open and checks how it ended
// ("withdrawn": cancelled or expired, whichever came first).
func (g *gatehouse) settledAs(t *testing.T, r *api.Request, status string) *api.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), acpGuard)
	defer cancel()
	got, err := g.operator.WaitSettled(ctx, r.ID)
	if err != nil {
		t.Fatalf("%s is still open after %s, want %s (the bridge never withdrew or answered it): %v", r.ID, acpGuard, status, err)
	}
	if got.Status != status && !(status == "withdrawn" && (got.Status == "cancelled" || got.Status == "expired")) {
		t.Fatalf("%s ended %s; want %s", r.ID, got.Status, status)
	}
	return got
}

// checkNote: the withdrawn record says why (the bridge's cancel reason).
func checkNote(t *testing.T, r *api.Request, why string) {
	t.Helper()
	if r.Note == nil || !strings.Contains(*r.Note, why) {
		t.Fatalf("%s was withdrawn with note %v; want it to say %q", r.ID, r.Note, why)
	}
}

// aborted waits for the bridge to withdraw the editor's copy of a request
// ($/cancel_request): the operator answered first.
func (e *acpEditor) aborted(t *testing.T, req int) {
	t.Helper()
	e.wait(t, "the editor's copy of the request withdrawn", func(ev acpEvent) bool {
		return ev.Event == "permission_aborted" && ev.Req == req
	})
}

// bridgeEditor starts the editor on `gatehouse acp [flags] -- AGENT…`, the
// bridge pointed at url with the agent token.
func (k acpKit) bridgeEditor(t *testing.T, a acpAgent, bin, url, token string, flags ...string) *acpEditor {
	t.Helper()
	home := t.TempDir()
	tr, proxy := newTrap(t)
	t.Cleanup(func() { checkTrap(t, tr) })
	argv, env, seen := a.start(t, k.modules, home)
	env = append(env, "GATEHOUSE_URL="+url, "GATEHOUSE_TOKEN="+token)
	cmd := append(append(append([]string{bin, "acp"}, flags...), "--"), argv...)
	return k.startEditor(t, acpEnv(home, proxy, env...), seen, cmd...)
}

// headless runs `gatehouse acp --headless [flags] -- AGENT…` once, with the
// prompt on stdin, in a fresh git project; it returns the project and the
// bridge's stderr.
func (k acpKit) headless(t *testing.T, a acpAgent, bin, url, token string, flags ...string) (acpSession, string) {
	t.Helper()
	home := t.TempDir()
	tr, proxy := newTrap(t)
	argv, env, seen := a.start(t, k.modules, home)
	project := filepath.Join(t.TempDir(), "project")
	if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), acpGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append(append([]string{"acp", "--headless"}, flags...), "--"), argv...)...)
	cmd.Dir = project
	cmd.Env = acpEnv(home, proxy, append(env, "GATEHOUSE_URL="+url, "GATEHOUSE_TOKEN="+token)...)
	cmd.Stdin = strings.NewReader("run the command")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
	err := cmd.Run()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the agent left behind
	if ctx.Err() != nil {
		t.Fatalf("gatehouse acp --headless did not finish within %s; model calls: %s\nstderr:\n%s", acpGuard, seen(), stderr.String())
	}
	t.Logf("gatehouse acp --headless: %v", err)
	checkTrap(t, tr)
	return acpSession{project: project}, stderr.String()
}

// agentPID is the bridge's child: the agent.
func agentPID(t *testing.T, bridge int) int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ")".
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(bridge) {
			pid, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(filepath.Dir(p)), "/"))
			return pid
		}
	}
	t.Fatalf("no child of the bridge (pid %d)", bridge)
	return 0
}

// waitExit waits for the editor to report the bridge's exit, whatever the
// editor reports meanwhile (its prompt fails with the connection).
func (e *acpEditor) waitExit(t *testing.T) acpEvent {
	t.Helper()
	return e.wait(t, "the bridge's exit", func(ev acpEvent) bool {
		return ev.Event == "agent_exit" || ev.Event == "error" && ev.Op == "prompt"
	})
}

// TestRealACPBridge puts the built `gatehouse acp` between the editor (the
// ACP TypeScript SDK) and each real ACP agent, offline, with a real
// Gatehouse: the operator and the editor race for each permission request.
// Without the operator's answer (Gatehouse down, or the timeout passed) the
// bridge never allows: headless, the agent gets its reject option; with an
// editor, the editor alone decides.
func TestRealACPBridge(t *testing.T) {
	kit := realACP(t)
	bin := gatehousetest.Build(t)
	down := httptest.NewServer(nil)
	down.Close()
	for _, a := range acpAgents {
		t.Run(a.name, func(t *testing.T) {
			t.Run("attached", func(t *testing.T) { testACPAttached(t, kit, a, bin) })
			t.Run("headless, Gatehouse down: the agent gets its reject option, and no reply is awaited", func(t *testing.T) {
				// --wait-reply longer than the run's guard: with no waiting
				// item filed, the run must not wait for a reply at all.
				s, stderr := kit.headless(t, a, bin, down.URL, "gh_unused", "--wait-reply", "10m")
				if s.ran() || !strings.Contains(stderr, "answered selected "+a.reject) {
					t.Fatalf("ran %v; want the agent answered %s and nothing run\n%s", s.ran(), a.reject, stderr)
				}
			})
			if a.name == "codex-acp" {
				testACPNoDecision(t, kit, a, bin, down.URL)
			}
		})
	}
}

// testACPNoDecision: the other ways the operator's answer fails to come. The
// bridge's timeout and an attached editor do not depend on the agent: one
// agent (the quickest to start) shows them.
func testACPNoDecision(t *testing.T, kit acpKit, a acpAgent, bin, down string) {
	t.Run("headless, no decision before the timeout: the agent gets its reject option", func(t *testing.T) {
		g := newGatehouse(t)
		s, stderr := kit.headless(t, a, bin, g.env.URL, g.agent, "--timeout", "1s")
		if s.ran() || !strings.Contains(stderr, "answered selected "+a.reject) {
			t.Fatalf("ran %v; want the agent answered %s and nothing run\n%s", s.ran(), a.reject, stderr)
		}
		if n := g.filed(t); n != 1 {
			t.Fatalf("%d requests filed; want 1", n)
		}
		g.settled(t)
	})
	t.Run("attached, Gatehouse down: the editor alone decides", func(t *testing.T) {
		e := kit.bridgeEditor(t, a, bin, down, "gh_unused")
		s := e.newSession(t, "down")
		e.prompt(t, s)
		p := e.permission(t, s)
		e.stderr.waitFor(t, "the editor decides")
		if s.ran() {
			t.Fatal("the command ran before the editor answered")
		}
		e.answer(t, p.Req, a.reject)
		if stop := e.stopReason(t, s); stop != a.rejectStop || s.ran() {
			t.Fatalf("stop %q, ran %v: want %s and nothing run", stop, s.ran(), a.rejectStop)
		}
	})
	t.Run("attached, no decision before the timeout: the filing is withdrawn, the editor alone decides", func(t *testing.T) {
		g := newGatehouse(t)
		filings := watchFilings(t, g)
		e := kit.bridgeEditor(t, a, bin, g.env.URL, g.agent, "--timeout", "1s")
		s := e.newSession(t, "timeout")
		e.prompt(t, s)
		p := e.permission(t, s)
		r := filings.of(t, s)
		g.settledAs(t, r, "withdrawn")
		e.stderr.waitFor(t, "the editor decides")
		if s.ran() {
			t.Fatal("the command ran before the editor answered")
		}
		// The editor's copy is still live: its allow is the one that counts.
		e.answer(t, p.Req, a.allow)
		if stop := e.stopReason(t, s); stop != "end_turn" || !s.ran() {
			t.Fatalf("stop %q, ran %v: want end_turn and the command run", stop, s.ran())
		}
	})
}

// testACPAttached runs one agent behind the bridge under the editor, one
// agent process for every case, a session each; the agent's exit comes last.
func testACPAttached(t *testing.T, kit acpKit, a acpAgent, bin string) {
	g := newGatehouse(t)
	filings := watchFilings(t, g)
	e := kit.bridgeEditor(t, a, bin, g.env.URL, g.agent)
	t.Run("an operator's allow runs the command", func(t *testing.T) {
		s := e.newSession(t, "operator-allow")
		e.prompt(t, s)
		p := e.permission(t, s)
		checkAgentOptions(t, a, p)
		r := filings.of(t, s)
		if !strings.Contains(r.Title, acpCommand) {
			t.Fatalf("filed %q; want the command in the title", r.Title)
		}
		g.decide(t, r, "allow_once")
		e.aborted(t, p.Req)
		if stop := e.stopReason(t, s); stop != "end_turn" || !s.ran() {
			t.Fatalf("stop %q, ran %v: want end_turn and the command run\n%s", stop, s.ran(), e.log())
		}
		g.settledAs(t, r, "resolved")
	})
	t.Run("an operator's deny does not", func(t *testing.T) {
		s := e.newSession(t, "operator-deny")
		e.prompt(t, s)
		p := e.permission(t, s)
		r := filings.of(t, s)
		g.decide(t, r, "reject_once")
		e.aborted(t, p.Req)
		if stop := e.stopReason(t, s); stop != a.rejectStop || s.ran() {
			t.Fatalf("stop %q, ran %v: want %s and nothing run\n%s", stop, s.ran(), a.rejectStop, e.log())
		}
		g.settledAs(t, r, "resolved")
	})
	t.Run("the editor answering first cancels the Gatehouse request", func(t *testing.T) {
		s := e.newSession(t, "editor-first")
		e.prompt(t, s)
		p := e.permission(t, s)
		r := filings.of(t, s)
		e.answer(t, p.Req, a.allow)
		if stop := e.stopReason(t, s); stop != "end_turn" || !s.ran() {
			t.Fatalf("stop %q, ran %v: want end_turn and the command run\n%s", stop, s.ran(), e.log())
		}
		checkNote(t, g.settledAs(t, r, "cancelled"), "decided in the editor: allow_once")
		// The operator's late allow changes nothing.
		if _, err := g.operator.Decide(context.Background(), r.ID, r.Version, "allow_once", ""); err == nil {
			t.Fatal("the operator decided a request the editor had answered")
		}
	})
	t.Run("session/cancel cancels the Gatehouse request", func(t *testing.T) {
		s := e.newSession(t, "session-cancel")
		e.prompt(t, s)
		p := e.permission(t, s)
		r := filings.of(t, s)
		e.cancel(t, s)
		e.answerCancelled(t, p.Req)
		if stop := e.stopReason(t, s); stop != "cancelled" || s.ran() {
			t.Fatalf("stop %q, ran %v: want cancelled and nothing run\n%s", stop, s.ran(), e.log())
		}
		checkNote(t, g.settledAs(t, r, "cancelled"), "cancelled the session's turn")
	})
	if a.name == "codex-acp" {
		t.Run("two sessions' requests in flight are answered each its own", func(t *testing.T) {
			s1, s2 := e.newSession(t, "first"), e.newSession(t, "second")
			e.prompt(t, s1)
			e.prompt(t, s2)
			e.permission(t, s1)
			e.permission(t, s2)
			r1, r2 := filings.of(t, s1), filings.of(t, s2)
			// Decided in the other order than asked.
			g.decide(t, r2, "reject_once")
			g.decide(t, r1, "allow_once")
			stop1, stop2 := e.stopReason(t, s1), e.stopReason(t, s2)
			if stop1 != "end_turn" || !s1.ran() || stop2 != a.rejectStop || s2.ran() {
				t.Fatalf("allowed session: %q ran %v; denied session: %q ran %v\n%s", stop1, s1.ran(), stop2, s2.ran(), e.log())
			}
		})
	}
	t.Run("the agent's exit ends the bridge and withdraws its request", func(t *testing.T) {
		s := e.newSession(t, "agent-exit")
		e.prompt(t, s)
		e.permission(t, s)
		r := filings.of(t, s)
		if err := syscall.Kill(agentPID(t, e.pid), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		ev := e.waitExit(t)
		if ev.Event != "agent_exit" {
			ev = e.waitExit(t)
		}
		if ev.Code == nil || *ev.Code != 128+int(syscall.SIGKILL) {
			t.Fatalf("the bridge exited %+v; want the agent's end, 137", ev)
		}
		checkNote(t, g.settledAs(t, r, "cancelled"), "the agent's session ended")
		if s.ran() {
			t.Fatal("the command ran")
		}
	})
}
