package acp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// syncBuffer is a bytes.Buffer safe across goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// headlessRun is one `gatehouse acp --headless` run of the fake agent.
type headlessRun struct {
	log    *logLines
	out    *syncBuffer
	cancel context.CancelFunc
	code   chan int
}

func runHeadless(t *testing.T, prefix string, gh acp.Gatehouse, timeout time.Duration) *headlessRun {
	t.Helper()
	return runHeadlessBridge(t, prefix, &acp.Bridge{Gatehouse: gh, Timeout: timeout}, "run the command")
}

// runHeadlessBridge runs b headless on the fake agent with the prompt.
func runHeadlessBridge(t *testing.T, prefix string, b *acp.Bridge, prompt string) *headlessRun {
	t.Helper()
	t.Setenv(agentEnv, prefix)
	h := &headlessRun{log: newLog(), out: &syncBuffer{}, code: make(chan int, 1)}
	b.Log = h.log
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		h.code <- b.RunHeadless(ctx, []string{os.Args[0]}, "/home/dev/project", prompt, h.out, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if t.Failed() {
			t.Logf("bridge log:\n%s\nstdout:\n%s", h.log.String(), h.out.String())
		}
	})
	return h
}

// exit is the run's exit code.
func (h *headlessRun) exit(t *testing.T) int {
	t.Helper()
	return testkit.Recv(t, h.code, "the headless run's end")
}

// TestHeadless runs the bridge as the agent's only client: every permission
// request goes to Gatehouse alone, and nothing but the operator's allow lets
// the agent run the command.
func TestHeadless(t *testing.T) {
	t.Run("the operator's allow runs the turn to end_turn: exit 0", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "claude-agent-acp", s.agent, time.Minute)
		r := s.filed(t, h.log)
		if r.SourceRef["editor"] != "gatehouse-acp-headless" || r.SourceRef["cwd"] != "/home/dev/project" || r.SourceRef["agent"] != "@zed-industries/claude-agent-acp" {
			t.Fatalf("source_ref %v", r.SourceRef)
		}
		s.decide(t, r, "allow_once")
		if code := h.exit(t); code != 0 || !strings.Contains(h.out.String(), "outcome selected allow") {
			t.Fatalf("exit %d, stdout %q; want 0 and the agent's allow", code, h.out.String())
		}
		if !strings.Contains(h.out.String(), "[permission] git push origin main: asking Gatehouse") {
			t.Fatalf("stdout does not show the permission request: %q", h.out.String())
		}
	})

	t.Run("the operator's deny of Codex ends its turn cancelled: exit 1", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "codex-acp", s.agent, time.Minute)
		s.decide(t, s.filed(t, h.log), "reject_once")
		if code := h.exit(t); code != 1 || !strings.Contains(h.out.String(), "outcome selected abort") {
			t.Fatalf("exit %d, stdout %q; want 1 and Codex's abort", code, h.out.String())
		}
	})

	t.Run("the operator's allow_always is remembered in Gatehouse for the session, and the agent is answered allow once", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "codex-acp", s.agent, time.Minute)
		r := s.filed(t, h.log)
		s.decide(t, r, "allow_always")
		if code := h.exit(t); code != 0 || !strings.Contains(h.out.String(), "outcome selected approved") {
			t.Fatalf("exit %d, stdout %q; want Codex's allow once", code, h.out.String())
		}
		if out := h.out.String(); strings.Contains(out, "approved-execpolicy-amendment") {
			t.Fatalf("stdout %q: the agent was given its own allow_always, a promise Gatehouse cannot revoke", out)
		}
		grants, err := s.operator.ListRemembered(context.Background())
		if err != nil || len(grants) != 1 || grants[0].Scope != "session" || grants[0].Session == "" {
			t.Fatalf("remembered %+v, %v; want one session grant", grants, err)
		}
		// The same call again in the same session: the grant allows it, no
		// one is asked, and the operator can see why.
		h2 := runHeadless(t, "codex-acp", s.agent, time.Minute)
		r2 := s.settled(t, testkit.Recv(t, h2.log.filed, "the second filing"))
		if r2.DecidedVia == nil || *r2.DecidedVia != "remembered" || r2.GrantID == nil || *r2.GrantID != grants[0].ID {
			t.Fatalf("second filing decided via %v grant %v; want the remembered grant %s", r2.DecidedVia, r2.GrantID, grants[0].ID)
		}
		if code := h2.exit(t); code != 0 {
			t.Fatalf("second run exit %d, stdout %q", code, h2.out.String())
		}
		// Revoked, it allows nothing more: the next call waits for a person.
		if _, err := s.operator.RevokeRemembered(context.Background(), grants[0].ID); err != nil {
			t.Fatal(err)
		}
		h3 := runHeadless(t, "codex-acp", s.agent, time.Minute)
		if r3 := s.filed(t, h3.log); r3.Status != "open" {
			t.Fatalf("after revoking, the filing is %s", r3.Status)
		}
	})

	t.Run("a deny rule decides at once, reading through Codex's bash -lc", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "rules.yaml")
		if err := os.WriteFile(file, []byte("rules:\n  - name: no-push\n    match:\n      command: '^git push'\n    action: deny\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := newServerWith(t, app.Config{RulesFile: file})
		h := runHeadless(t, "codex-acp", s.agent, time.Minute)
		r := s.settled(t, testkit.Recv(t, h.log.filed, "the filing"))
		if r.DecidedVia == nil || *r.DecidedVia != "rule:no-push" {
			t.Fatalf("decided via %v, want the rule", r.DecidedVia)
		}
		if code := h.exit(t); code != 1 || !strings.Contains(h.out.String(), "outcome selected abort") {
			t.Fatalf("exit %d, stdout %q; want Codex's abort", code, h.out.String())
		}
	})

	t.Run("no decision before the timeout answers reject_once, not cancelled", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "claude-agent-acp", s.agent, time.Second)
		r := s.filed(t, h.log)
		if code := h.exit(t); code != 0 || !strings.Contains(h.out.String(), "outcome selected reject") {
			t.Fatalf("exit %d, stdout %q; want Claude's reject option (its turn ends end_turn)", code, h.out.String())
		}
		if got := s.settled(t, r.ID); got.Status == "resolved" {
			t.Fatalf("the timed-out request was %s %v", got.Status, got.Decision)
		}
	})

	t.Run("Gatehouse down answers reject_once", func(t *testing.T) {
		h := runHeadless(t, "gemini-cli", client.New(deadURL(t), "any"), time.Minute)
		if code := h.exit(t); code != 0 || !strings.Contains(h.out.String(), "outcome selected cancel") {
			t.Fatalf("exit %d, stdout %q; want Gemini's reject option, whose id is cancel", code, h.out.String())
		}
	})

	t.Run("a refused token answers reject_once", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "gemini-cli", client.New(s.env.URL, "not-a-token"), time.Minute)
		if code := h.exit(t); code != 0 || !strings.Contains(h.out.String(), "outcome selected cancel") {
			t.Fatalf("exit %d, stdout %q", code, h.out.String())
		}
	})

	t.Run("an interrupt cancels the turn and its Gatehouse request: exit 1", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "claude-agent-acp", s.agent, time.Minute)
		r := s.filed(t, h.log)
		h.cancel()
		if code := h.exit(t); code != 1 || !strings.Contains(h.out.String(), "outcome cancelled") {
			t.Fatalf("exit %d, stdout %q; want 1 and cancelled", code, h.out.String())
		}
		if got := s.settled(t, r.ID); got.Status != "cancelled" {
			t.Fatalf("request %s, want cancelled", got.Status)
		}
	})
}

// TestAgentCannotApproveItself plays the agent, which holds the bridge's
// own token, trying to get an allow for something other than what was filed.
func TestAgentCannotApproveItself(t *testing.T) {
	ctx := context.Background()

	t.Run("it can neither edit nor decide the filing", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "claude-agent-acp", s.agent, time.Minute)
		r := s.filed(t, h.log)
		title := "Run: git status"
		err := s.agent.Do(ctx, http.MethodPatch, "/v1/requests/"+r.ID, nil, api.Patch{Version: r.Version, Title: &title}, nil)
		if !isStatus(err, http.StatusConflict) {
			t.Fatalf("the agent edited the bridge's filing: %v", err)
		}
		if _, err := s.agent.Decide(ctx, r.ID, r.Version, "allow_once", ""); !isStatus(err, http.StatusForbidden) {
			t.Fatalf("the agent decided: %v", err)
		}
		s.decide(t, r, "reject_once")
		if code := h.exit(t); !strings.Contains(h.out.String(), "outcome selected reject") {
			t.Fatalf("exit %d, stdout %q; want the operator's reject", code, h.out.String())
		}
	})

	t.Run("it withdraws the filing and files a lookalike the operator allows: the agent still gets reject", func(t *testing.T) {
		s := newServer(t)
		h := runHeadless(t, "claude-agent-acp", s.agent, time.Minute)
		r := s.filed(t, h.log)
		if _, err := s.agent.Cancel(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		fake, err := s.agent.File(ctx, api.NewRequest{Kind: r.Kind, Title: r.Title, Summary: r.Summary, Detail: r.Detail,
			Tool: r.Tool, Command: r.Command, Options: r.Options, Source: r.Source, SourceRef: r.SourceRef}, "")
		if err != nil {
			t.Fatal(err)
		}
		s.decide(t, fake, "allow_once")
		if code := h.exit(t); strings.Contains(h.out.String(), "outcome selected allow") || !strings.Contains(h.out.String(), "outcome selected reject") {
			t.Fatalf("exit %d, stdout %q; want reject", code, h.out.String())
		}
	})

	for name, swap := range map[string]func(s *server, filed *api.Request) *api.Request{
		"a decision on another record": func(s *server, filed *api.Request) *api.Request {
			other, err := s.agent.File(ctx, api.NewRequest{Kind: "permission", Title: "Run: true", Command: "true", Tool: "shell", SourceRef: filed.SourceRef,
				Options: filed.Options}, "")
			if err != nil {
				panic(err)
			}
			d, err := s.operator.Decide(ctx, other.ID, other.Version, "allow_once", "")
			if err != nil {
				panic(err)
			}
			return d
		},
		"an allow made on another version than the one filed": func(s *server, filed *api.Request) *api.Request {
			d, err := s.operator.Decide(ctx, filed.ID, filed.Version, "reject_once", "")
			if err != nil {
				panic(err)
			}
			allow, other := "allow_once", strings.Repeat("0", 64)
			d.Decision, d.DecidedDigest = &allow, &other
			return d
		},
	} {
		t.Run("a Gatehouse that answers "+name+" gets reject", func(t *testing.T) {
			s := newServer(t)
			gh := &lyingGatehouse{Client: s.agent, swap: func(filed *api.Request) *api.Request { return swap(s, filed) }}
			h := runHeadless(t, "gemini-cli", gh, time.Minute)
			if code := h.exit(t); strings.Contains(h.out.String(), "outcome selected proceed_once") || !strings.Contains(h.out.String(), "outcome selected cancel") {
				t.Fatalf("exit %d, stdout %q; want Gemini's reject", code, h.out.String())
			}
		})
	}
}

// lyingGatehouse answers the bridge's wait with a record of its choosing: a
// server (or a man in the middle) that says "allowed" about something else.
type lyingGatehouse struct {
	*client.Client
	swap func(filed *api.Request) *api.Request
}

func (l *lyingGatehouse) WaitSettled(ctx context.Context, id string) (*api.Request, error) {
	filed, err := l.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.swap(filed), nil
}

func isStatus(err error, status int) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Status == status
}
