package main

import (
	"context"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// forwardingServer is a Gatehouse that forwards decisions to runtimes'
// callbacks, as `serve` does.
func forwardingServer(t *testing.T) (*testServer, string) {
	t.Helper()
	// webtest runs the production assembly, forwarder included.
	e := webtest.New(t, "sqlite", web.Config{})
	s, changes := e.Store, e.Changes
	ctx := context.Background()
	_, rt, err := s.CreateToken(ctx, models.RoleRuntime, "codex-laptop")
	if err != nil {
		t.Fatal(err)
	}
	_, op, err := s.CreateToken(ctx, models.RoleOperator, "alice")
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{URL: e.URL, Agent: rt, Store: s, Changes: changes, Operator: client.New(e.URL, op)}, rt
}

// forwarded waits until the forward of the request's decision has an outcome.
func forwarded(t *testing.T, ts *testServer, id string) string {
	t.Helper()
	sub := ts.Changes.Subscribe(64)
	defer sub.Close()
	deadline := time.After(codexRunLimit)
	for {
		r, err := ts.Operator.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st := r.Actuation.State; st != "pending" && st != "none" {
			return st
		}
		select {
		case <-sub.C:
		case <-deadline:
			t.Fatalf("the decision on %s was never forwarded", id)
		}
	}
}

func TestCodexAppServerRuntimeRealCLI(t *testing.T) {
	codex := os.Getenv(codexEnv)
	if codex == "" {
		testkit.Skipf(t, "%s is not set: the path to the Codex CLI (npm @openai/codex@0.169.0; .ci/run installs it)", codexEnv)
	}
	out, err := exec.Command(codex, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", codex, err, out)
	}
	t.Logf("running the real Codex CLI: %s", strings.TrimSpace(string(out)))
	bin := gatehousetest.Build(t)
	procRoot := filepath.Dir(t.TempDir())
	runtimeFlags := []string{"--runtime", "codex-laptop", "--callback-listen", "127.0.0.1:0"}

	t.Run("the operator's decision is delivered to the live bridge", func(t *testing.T) {
		ts, token := forwardingServer(t)
		ids := ts.created(t)
		c, project := startAppServer(t, codex, bin, ts.URL, token, runtimeFlags...)
		approval := c.startTurn(project)
		id := waitFiled(t, ids)
		ts.decide(t, id, "accept", "")
		c.awaitResolved(approval.ID)
		c.awaitMethod("turn/completed")
		if st := forwarded(t, ts, id); st != "delivered" {
			t.Fatalf("actuation %s, want delivered", st)
		}
		c.end()
		checkNothingOpen(t, ts, procRoot, c.home)
	})
	t.Run("a decision for an approval a killed bridge held is a conflict", func(t *testing.T) {
		ts, token := forwardingServer(t)
		ids := ts.created(t)
		c, project := startAppServer(t, codex, bin, ts.URL, token, runtimeFlags...)
		c.startTurn(project)
		id := waitFiled(t, ids)
		// The bridge dies with the approval open; Codex, its stdin gone, exits.
		if err := c.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for range c.lines {
		}
		testkit.Recv(t, c.exited, "the bridge to exit")
		// A new bridge registers the same runtime (a new callback address).
		next, _ := startAppServer(t, codex, bin, ts.URL, token, runtimeFlags...)
		// The bridge registers before it starts Codex, so Codex's answer to
		// initialize means the runtime's new callback is in place.
		next.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
			"clientInfo": map[string]any{"name": "gatehouse-test", "title": "Gatehouse test", "version": "0.1.0"}}})
		next.await("initialize result", func(m rpcMessage) bool { return string(m.ID) == "1" && m.Method == "" })
		ts.decide(t, id, "accept", "")
		if st := forwarded(t, ts, id); st != "conflict" {
			t.Fatalf("actuation %s, want conflict", st)
		}
		next.end()
		checkNothingOpen(t, ts, procRoot, c.home, next.home)
	})
}
