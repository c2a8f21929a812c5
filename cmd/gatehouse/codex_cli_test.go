package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
)

// codexEnv names the Codex CLI binary the real-client test runs (.ci/run
// installs npm @openai/codex@0.169.0 and sets it).
const codexEnv = "GATEHOUSE_TEST_CODEX"

// hooksJSON is the hooks.json docs/agents.md shows.
const hooksJSON = "hooks.json"

// codexRunLimit bounds one `codex exec` run: a deadline for a hang.
const codexRunLimit = 2 * time.Minute

// codexConfig keeps Codex offline: its model is the in-test mock on
// 127.0.0.1, plugin sync (github.com, chatgpt.com), update checks,
// analytics, feedback and history are off (traced with strace when the
// fixtures were recorded: then Codex dials only 127.0.0.1).
const codexConfig = `model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
env_key = "GATEHOUSE_TEST_MOCK_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"
`

// codexRun is one `codex exec` run with Gatehouse's hook in its hooks.json.
type codexRun struct {
	home   string // HOME, CODEX_HOME and the project are under it
	mock   *modelmock.Responses
	stdout string
	stderr string
	err    error
}

// runCodexExec runs the real Codex CLI once, in a fresh CODEX_HOME whose
// hooks.json is one docs/agents.md shows (testdata/codex/hooks*.json), its
// command pointed at the built gatehouse binary, the hook at the given server.
func runCodexExec(t *testing.T, codex, gatehouse, hooksFile, url, token, command string) *codexRun {
	t.Helper()
	mock := modelmock.NewResponses(t, command, "Pushing needs to write outside the workspace.")
	hooks, err := os.ReadFile("testdata/codex/" + hooksFile)
	if err != nil {
		t.Fatal(err)
	}
	hooks = bytes.Replace(hooks, []byte(`"gatehouse hook codex`), []byte(`"`+gatehouse+` hook codex`), 1)
	home := newCodexHome(t, mock, hooks)
	run := execCodex(t, codex, home, url, token, "exec", "--approve-for-me", "--dangerously-bypass-hook-trust",
		"--skip-git-repo-check", "-C", filepath.Join(home, "project"), "run the command")
	run.mock = mock
	return run
}

// newCodexHome makes HOME with a CODEX_HOME whose model is mock and whose
// hooks.json is hooks, and an empty project.
func newCodexHome(t *testing.T, mock *modelmock.Responses, hooks []byte) string {
	t.Helper()
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	for _, d := range []string{codexHome, filepath.Join(home, "project")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(codexHome, "hooks.json"), hooks)
	write(t, filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf(codexConfig, mock.URL)))
	return home
}

// execCodex runs the Codex CLI with args in home's project, its hooks
// reaching Gatehouse at url with token.
func execCodex(t *testing.T, codex, home, url, token string, args ...string) *codexRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), codexRunLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, args...)
	cmd.Dir = filepath.Join(home, "project")
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex"), "PATH=/usr/local/bin:/usr/bin:/bin", "SHELL=/bin/bash",
		"GATEHOUSE_TEST_MOCK_KEY=mock", "GATEHOUSE_URL=" + url, "GATEHOUSE_TOKEN=" + token, "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = strings.NewReader("")
	err := cmd.Run()
	return &codexRun{home: home, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// toolOutput is what the model was handed as the command's result.
func (r *codexRun) toolOutput(t *testing.T) string {
	t.Helper()
	outputs := r.mock.Outputs()
	if len(outputs) != 1 {
		t.Fatalf("the model got %d tool results, want 1 (exec err %v)\nstdout:\n%s\nstderr:\n%s", len(outputs), r.err, r.stdout, r.stderr)
	}
	return outputs[0]
}

func TestCodexCLI(t *testing.T) {
	codex := os.Getenv(codexEnv)
	if codex == "" {
		testkit.Skipf(t, "%s is not set: the path to the Codex CLI (npm @openai/codex@0.169.0; .ci/run installs it)", codexEnv)
	}
	out, err := exec.Command(codex, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", codex, err, out)
	}
	t.Logf("running the real Codex CLI: %s (%s)", strings.TrimSpace(string(out)), codex)
	bin := gatehousetest.Build(t)
	procRoot := filepath.Dir(t.TempDir())

	t.Run("an operator's allow lets the command run", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := make(chan *codexRun, 1)
		go func() { done <- runCodexExec(t, codex, bin, hooksJSON, ts.URL, ts.Agent, "echo gatehouse-ok") }()
		id := waitID(t, ids, done)
		ts.decide(t, id, "once", "")
		run := finished(t, done)
		if got := run.toolOutput(t); !strings.Contains(got, "gatehouse-ok") {
			t.Fatalf("tool result %q: the command did not run", got)
		}
		checkStatus(t, ts, id, "resolved")
		run.checkReviewer(t, false)
		checkNothingOpen(t, ts, procRoot, run.home)
	})
	t.Run("a deny with a note reaches the model", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := make(chan *codexRun, 1)
		go func() { done <- runCodexExec(t, codex, bin, hooksJSON, ts.URL, ts.Agent, "echo gatehouse-ok") }()
		id := waitID(t, ids, done)
		ts.decide(t, id, "deny", "push to a branch and open a PR instead")
		run := finished(t, done)
		got := run.toolOutput(t)
		if !strings.Contains(got, "push to a branch and open a PR instead") || strings.Contains(got, "gatehouse-ok\n") {
			t.Fatalf("tool result %q: want the operator's note, and the command not run", got)
		}
		t.Logf("the model was told: %q", got)
		run.checkReviewer(t, false)
		checkNothingOpen(t, ts, procRoot, run.home)
	})
	t.Run("a server that is down falls back to Codex, never an allow", func(t *testing.T) {
		ts := newTestServer(t)
		run := runCodexExec(t, codex, bin, hooksJSON, "http://127.0.0.1:1", ts.Agent, "echo gatehouse-ok")
		got := run.toolOutput(t)
		if strings.Contains(got, "gatehouse-ok\n") {
			t.Fatalf("tool result %q: the command ran without an operator's allow", got)
		}
		t.Logf("Codex's own fallback told the model: %q", got)
		run.checkReviewer(t, true)
		checkNothingOpen(t, ts, procRoot, run.home)
	})
	t.Run("a PreToolUse deny with a note reaches the model", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := make(chan *codexRun, 1)
		go func() {
			done <- runCodexExec(t, codex, bin, "hooks-pretooluse.json", ts.URL, ts.Agent, "echo gatehouse-ok")
		}()
		id := waitID(t, ids, done)
		ts.decide(t, id, "deny", "not before the release")
		run := finished(t, done)
		got := run.toolOutput(t)
		if !strings.Contains(got, "not before the release") || strings.Contains(got, "gatehouse-ok\n") {
			t.Fatalf("tool result %q: want the operator's note, and the command not run", got)
		}
		t.Logf("the model was told: %q", got)
		checkNothingOpen(t, ts, procRoot, run.home)
	})
}

// waitID waits for the hook's filing, or fails with what Codex said when it
// ended without one.
// checkReviewer: Codex's own automatic reviewer was asked only when the hook
// gave no decision.
func (r *codexRun) checkReviewer(t *testing.T, want bool) {
	t.Helper()
	n := r.mock.Reviews()
	if (n > 0) != want {
		t.Fatalf("Codex's approval reviewer was asked %d times; want asked: %v", n, want)
	}
}

// finished waits for a Codex run; runCodexExec itself ends one at codexRunLimit.
func finished(t *testing.T, done <-chan *codexRun) *codexRun {
	t.Helper()
	select {
	case run := <-done:
		return run
	case <-time.After(codexRunLimit + testkit.CapWait):
		t.Fatal("Codex never returned")
		return nil
	}
}

func waitID(t *testing.T, ids <-chan string, done <-chan *codexRun) string {
	t.Helper()
	select {
	case id := <-ids:
		return id
	case run := <-done:
		t.Fatalf("Codex ended (%v) without filing a request through the hook\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	case <-time.After(codexRunLimit):
		t.Fatal("Codex never filed a request through the hook")
	}
	return ""
}

// checkNothingOpen: no open request, and no process left whose command line
// or environment names one of the test's directories (the built gatehouse, so
// a hook or the bridge; Codex's HOME, so Codex and whatever it started).
func checkNothingOpen(t *testing.T, ts *testServer, roots ...string) {
	t.Helper()
	if n, err := ts.Store.CountOpen(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d open requests afterwards (%v)", n, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(p, "environ"))
		for _, root := range roots {
			if bytes.Contains(cmdline, []byte(root)) || bytes.Contains(environ, []byte(root)) {
				t.Fatalf("process %s still runs: %s", p, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
			}
		}
	}
}
