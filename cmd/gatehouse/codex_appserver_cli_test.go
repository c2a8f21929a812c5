package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
)

// appClient plays the editor: it starts `gatehouse codex app-server` over the
// real Codex CLI and speaks JSON-RPC to it on stdio.
type appClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	exited chan error
	stderr *syncBuf
	mock   *modelmock.Responses
	home   string
}

func startAppServer(t *testing.T, codex, gatehouse, url, token string, flags ...string) (*appClient, string) {
	t.Helper()
	mock := modelmock.NewResponses(t, "echo gatehouse-ok", "Pushing needs to write outside the workspace.")
	home := t.TempDir()
	codexHome, project := filepath.Join(home, ".codex"), filepath.Join(home, "project")
	for _, d := range []string{codexHome, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf(codexConfig, mock.URL)))
	// As docs/agents.md shows it, with Codex's own arguments after "--".
	args := append(append([]string{"codex", "app-server", "--codex", codex}, flags...), "--", "-c", "model=gpt-5.5")
	cmd := exec.Command(gatehouse, args...)
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "PATH=/usr/local/bin:/usr/bin:/bin", "SHELL=/bin/bash",
		"GATEHOUSE_TEST_MOCK_KEY=mock", "GATEHOUSE_URL=" + url, "GATEHOUSE_TOKEN=" + token, "NO_COLOR=1"}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &appClient{t: t, cmd: cmd, in: in, lines: make(chan []byte, 256), exited: make(chan error, 1), stderr: &syncBuf{}, mock: mock, home: home}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- line
			}
			if err != nil {
				close(c.lines)
				c.exited <- cmd.Wait()
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return c, project
}

func (c *appClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to the bridge: %v", err)
	}
}

// rpcMessage is what the test reads of a message from the bridge.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

// await reads messages until one matches, failing after the deadline.
func (c *appClient) await(what string, match func(m rpcMessage) bool) rpcMessage {
	c.t.Helper()
	deadline := time.After(codexRunLimit)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the bridge ended before %s; stderr:\n%s", what, c.stderr)
			}
			var m rpcMessage
			if json.Unmarshal(line, &m) == nil && match(m) {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no %s in %s; stderr:\n%s", what, codexRunLimit, c.stderr)
		}
	}
}

func (c *appClient) awaitMethod(method string) rpcMessage {
	c.t.Helper()
	return c.await(method, func(m rpcMessage) bool { return m.Method == method })
}

// end closes the bridge's stdin: Codex and the bridge must exit.
func (c *appClient) end() {
	c.t.Helper()
	c.in.Close()
	for range c.lines {
	}
	select {
	case err := <-c.exited:
		if err != nil {
			c.t.Fatalf("gatehouse codex app-server: %v; stderr:\n%s", err, c.stderr)
		}
	case <-time.After(codexRunLimit):
		c.t.Fatalf("the bridge did not exit; stderr:\n%s", c.stderr)
	}
}

// startTurn opens a thread and a turn whose model asks for the command, and
// returns Codex's approval request.
func (c *appClient) startTurn(project string) rpcMessage {
	c.t.Helper()
	c.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"capabilities": map[string]any{"experimentalApi": true},
		"clientInfo": map[string]any{"name": "gatehouse-test", "title": "Gatehouse test", "version": "0.1.0"}}})
	c.await("initialize result", func(m rpcMessage) bool { return string(m.ID) == "1" && m.Method == "" })
	c.send(map[string]any{"method": "initialized"})
	c.send(map[string]any{"id": 2, "method": "thread/start", "params": map[string]any{"approvalPolicy": "on-request", "approvalsReviewer": "user",
		"cwd": project, "ephemeral": true, "model": "gpt-5.5", "modelProvider": "mock", "sandbox": "workspace-write"}})
	started := c.await("thread/start result", func(m rpcMessage) bool { return string(m.ID) == "2" && m.Method == "" })
	var thread struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(started.Result, &thread); err != nil || thread.Thread.ID == "" {
		c.t.Fatalf("thread/start answered %s", started.Result)
	}
	c.send(map[string]any{"id": 3, "method": "turn/start", "params": map[string]any{"threadId": thread.Thread.ID,
		"input": []any{map[string]any{"type": "text", "text": "run the command", "text_elements": []any{}}}}})
	return c.awaitMethod("item/commandExecution/requestApproval")
}

// awaitResolved waits for Codex's serverRequest/resolved for the request id.
func (c *appClient) awaitResolved(id json.RawMessage) {
	c.t.Helper()
	c.await("serverRequest/resolved for "+string(id), func(m rpcMessage) bool {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		return m.Method == "serverRequest/resolved" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(id)
	})
}

func TestCodexAppServerBridgeRealCLI(t *testing.T) {
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

	t.Run("the operator answers first", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		c, project := startAppServer(t, codex, bin, ts.URL, ts.Agent)
		approval := c.startTurn(project)
		id := waitFiled(t, ids)
		r, err := ts.Operator.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("filed %q with options %+v", r.Title, r.Options)
		ts.decide(t, id, "accept", "")
		c.awaitResolved(approval.ID) // the local client is told it is answered
		done := c.await("the command's item/completed", func(m rpcMessage) bool {
			return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"commandExecution"`)
		})
		if !strings.Contains(string(done.Params), "gatehouse-ok") {
			t.Fatalf("the command did not run: %s", done.Params)
		}
		c.awaitMethod("turn/completed")
		c.end()
		checkNothingOpen(t, ts, procRoot, c.home)
	})
	t.Run("the local client answers first", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		c, project := startAppServer(t, codex, bin, ts.URL, ts.Agent)
		approval := c.startTurn(project)
		id := waitFiled(t, ids)
		c.send(map[string]any{"id": approval.ID, "result": map[string]any{"decision": "decline"}})
		c.awaitResolved(approval.ID)
		c.awaitMethod("turn/completed")
		c.end()
		got := c.mock.Outputs()
		if len(got) != 1 || strings.Contains(got[0], "gatehouse-ok\n") {
			t.Fatalf("tool results %q: want one, the command declined", got)
		}
		checkStatus(t, ts, id, "cancelled")
		checkNothingOpen(t, ts, procRoot, c.home)
	})
}

func waitFiled(t *testing.T, ids <-chan string) string {
	t.Helper()
	select {
	case id := <-ids:
		return id
	case <-time.After(codexRunLimit):
		t.Fatal("the bridge filed nothing in Gatehouse")
	}
	return ""
}

// syncBuf is a strings.Builder a process's output goroutine writes.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
