package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/web"
)

// nodeModulesEnvVar names a node_modules holding @modelcontextprotocol/sdk
// (.ci/run installs it from .ci/claude/package.json, pinned).
const nodeModulesEnvVar = "GATEHOUSE_TEST_MCP_NODE_MODULES"

// typescriptClient is testdata/mcp_typescript_client.mjs in a temporary
// directory beside a node_modules link, so its imports resolve as an
// agent's own would.
type typescriptClient struct {
	node, script string
}

func newTypescriptClient(t *testing.T) typescriptClient {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Skipf(t, "node is not on PATH: the MCP TypeScript SDK test needs Node.js")
	}
	modules := os.Getenv(nodeModulesEnvVar)
	if modules == "" {
		testkit.Skipf(t, "%s is not set: no @modelcontextprotocol/sdk to run (npm ci --prefix .ci/claude, then %s=.ci/claude/node_modules)", nodeModulesEnvVar, nodeModulesEnvVar)
	}
	pkg, err := os.ReadFile(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json"))
	if err != nil {
		testkit.Skipf(t, "%s=%s has no @modelcontextprotocol/sdk: %v", nodeModulesEnvVar, modules, err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(pkg, &meta); err != nil {
		t.Fatal(err)
	}
	nodeVersion, _ := exec.Command(node, "--version").Output()
	t.Logf("MCP TypeScript SDK @modelcontextprotocol/sdk %s on node %s", meta.Version, strings.TrimSpace(string(nodeVersion)))
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "mcp_typescript_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, src, 0o600); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return typescriptClient{node: node, script: script}
}

// tsEvent is one line the script prints.
type tsEvent struct {
	Event      string        `json:"event"`
	ID         string        `json:"id"`
	Message    string        `json:"message"`
	Progress   float64       `json:"progress"`
	Total      float64       `json:"total"`
	IsError    bool          `json:"isError"`
	Ms         int           `json:"ms"`
	Structured mcpWaitResult `json:"structured"`
}

// start runs the script as token name against env and returns its events;
// the channel closes when the process has exited.
func (c typescriptClient) start(t *testing.T, env *mcpEnv, timeoutMs string) <-chan tsEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	args := []string{c.script, env.URL + "/mcp", env.tokens["a1"]}
	if timeoutMs != "" {
		args = append(args, timeoutMs)
	}
	cmd := exec.CommandContext(ctx, c.node, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := make(chan tsEvent, 64)
	exited := make(chan struct{})
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e tsEvent
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				e = tsEvent{Event: "garbled", Message: sc.Text()}
			}
			events <- e
		}
		err := cmd.Wait()
		if err != nil {
			events <- tsEvent{Event: "exit", Message: err.Error() + ": " + stderr.String()}
		}
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		testkit.Recv(t, exited, "the MCP client to exit")
	})
	return events
}

// tsNext returns the next event, failing on a deadline or on the SDK's own
// error reports.
func tsNext(t *testing.T, events <-chan tsEvent) tsEvent {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the TypeScript client exited early")
		}
		switch e.Event {
		case "error", "threw", "exit", "garbled":
			t.Fatalf("TypeScript client %s: %s", e.Event, e.Message)
		}
		return e
	case <-time.After(mcpGuard):
		t.Fatal("the TypeScript client said nothing")
	}
	return tsEvent{}
}

// tsUntil skips progress events up to the named one and counts them.
func tsUntil(t *testing.T, events <-chan tsEvent, name string) (tsEvent, int) {
	t.Helper()
	n := 0
	for {
		e := tsNext(t, events)
		if e.Event == name {
			return e, n
		}
		if e.Event != "progress" {
			t.Fatalf("event %+v before %s", e, name)
		}
		n++
	}
}

// tsFinished checks the client said nothing more and exited cleanly. While
// it closes, the SDK may report aborting a response stream it had not read to
// the end; that is its own close, but never a timeout or a stray answer.
func tsFinished(t *testing.T, events <-chan tsEvent) {
	t.Helper()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return
			}
			if e.Event == "closing" && strings.Contains(e.Message, "AbortError") {
				t.Logf("while closing, the SDK reported: %s", e.Message)
				continue
			}
			t.Fatalf("after the answer the TypeScript client said %s: %s", e.Event, e.Message)
		case <-time.After(mcpGuard):
			t.Fatal("the TypeScript client did not exit")
		}
	}
}

// TestMCPTypeScriptSDK drives /mcp with the official TypeScript SDK's client
// at its defaults, but for the times: the server's 50 s hold and 10 s
// progress are scaled to 1 s and 100 ms, and where the SDK's own 60 s
// timeout matters it is scaled to 3 s, still well short of the 60 s asked.
func TestMCPTypeScriptSDK(t *testing.T) {
	ts := newTypescriptClient(t)
	t.Run("request, wait, the operator decides over HTTP: the wait answers decided", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{MCPProgressEvery: 100 * time.Millisecond})
		events := ts.start(t, env, "")
		if e := tsNext(t, events); e.Event != "connected" {
			t.Fatalf("first event %+v", e)
		}
		filed := tsNext(t, events)
		select {
		case <-env.watched:
		case <-time.After(mcpGuard):
			t.Fatal("the wait never started")
		}
		env.decide(filed.ID, "allow", "ship it")
		res, _ := tsUntil(t, events, "result")
		w := res.Structured
		if res.IsError || !w.Decided || w.Request.Status != "resolved" || w.Request.Decision == nil || *w.Request.Decision != "allow" ||
			w.Request.Note == nil || *w.Request.Note != "ship it" {
			t.Fatalf("the wait answered %+v", res)
		}
		tsFinished(t, events)
	})
	t.Run("a wait past the client's timeout ends at the hold: decided false, with progress, no timeout", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{MCPMaxHold: time.Second, MCPProgressEvery: 100 * time.Millisecond})
		events := ts.start(t, env, "3000")
		tsNext(t, events)
		tsNext(t, events)
		res, progress := tsUntil(t, events, "result")
		w := res.Structured
		if res.IsError || w.Decided || w.Waited != 1 || w.Request.Status != "open" {
			t.Fatalf("the wait answered %+v", res)
		}
		if progress == 0 {
			t.Fatal("no progress notification reached the client's onprogress")
		}
		t.Logf("answered after %d ms with %d progress notifications", res.Ms, progress)
		tsFinished(t, events)
	})
}
