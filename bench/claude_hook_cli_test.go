package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/modelmock"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// claudeEnvVar names the Claude Code CLI to run (.ci/run installs the pinned
// one from .ci/claude/package.json).
const claudeEnvVar = "GATEHOUSE_TEST_CLAUDE"

// stampRule approves the command the mock model asks for: it prints the
// time it ran, in nanoseconds.
const stampRule = "  - name: stamps-ok\n    match:\n      tool: Bash\n      command: '^date \\+%s%N$'\n    action: approve\n"

// BenchmarkClaudeCodeHookCLI runs the real `claude -p` against a mock model
// that asks for `date +%s%N` b.N times, one tool call per turn, with a
// PreToolUse hook that a Gatehouse rule answers allow: the http hook, the
// agent build's command hook, and for reference no hook (Claude Code's own
// settings allow the command, in every case). Reported, p50 and p99 in
// milliseconds: tool-call-to-tool-run, from the
// moment the mock finished sending the tool call to the time the command
// printed (both clocks are this machine's); and for the command hook, its
// time as Claude Code measures it (the durationMs it writes in the session's
// transcript; it writes none for an http hook).
//
//	GATEHOUSE_TEST_CLAUDE=$PWD/.ci/claude/node_modules/.bin/claude \
//	  go test -run '^$' -bench ClaudeCodeHookCLI -benchtime 40x ./bench/
func BenchmarkClaudeCodeHookCLI(b *testing.B) {
	cli := os.Getenv(claudeEnvVar)
	if cli == "" {
		testkit.Skipf(b, "%s is not set: no Claude Code CLI to run (npm ci --prefix .ci/claude, then %s=$PWD/.ci/claude/node_modules/.bin/claude)", claudeEnvVar, claudeEnvVar)
	}
	version, err := exec.Command(cli, "--version").Output()
	if err != nil {
		b.Fatalf("%s --version: %v", cli, err)
	}
	b.Logf("Claude Code %s", strings.TrimSpace(string(version)))
	bin := buildGatehouse(b, filepath.Join(b.TempDir(), "gatehouse"), []string{"CGO_ENABLED=0"}, []string{"-tags", "agent"})
	hooks := []struct {
		name string
		hook func(url string) map[string]any
	}{
		{"http", func(url string) map[string]any {
			return map[string]any{"type": "http", "url": url + "/v1/hooks/claude-code?timeout=60",
				"headers": map[string]string{"Authorization": "Bearer $GATEHOUSE_TOKEN"}, "allowedEnvVars": []string{"GATEHOUSE_TOKEN"}, "timeout": 90}
		}},
		{"command-agent", func(string) map[string]any {
			return map[string]any{"type": "command", "command": bin + " hook claude-code --timeout 1m", "timeout": 90}
		}},
		{"no-hook", nil},
	}
	for _, h := range hooks {
		b.Run(h.name, func(b *testing.B) {
			s := newHookServer(b, "sqlite", stampRule)
			// Claude Code's own settings allow the command in every case, so
			// its permission flow is the same and only the hook differs.
			settings := map[string]any{"permissions": map[string]any{"allow": []string{"Bash(date *)"}}}
			if h.hook != nil {
				settings["hooks"] = map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{h.hook(s.URL)}}}}
			}
			model := newStampModel(b, b.N)
			b.ResetTimer()
			hookTimes := runClaude(b, cli, settings, model.URL, s.URL, s.token, b.N+4)
			b.StopTimer()
			lat := model.latencies(b)
			if len(lat) != b.N {
				b.Fatalf("%d of %d tool calls ran", len(lat), b.N)
			}
			if _, n := s.servedSince(0); h.hook != nil && n < b.N {
				b.Fatalf("Gatehouse answered %d calls for %d tool calls: the hook did not run", n, b.N)
			}
			ms := func(lat []time.Duration, q float64) float64 {
				slices.Sort(lat)
				return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(lat, 0.50), "p50-call-to-run-ms")
			b.ReportMetric(ms(lat, 0.99), "p99-call-to-run-ms")
			if h.name != "command-agent" {
				return // Claude Code 2.1.328 records no durationMs for an http hook
			}
			if len(hookTimes) != b.N {
				b.Fatalf("the transcript records %d PreToolUse hook runs for %d tool calls", len(hookTimes), b.N)
			}
			b.ReportMetric(ms(hookTimes, 0.50), "p50-hook-ms")
			b.ReportMetric(ms(hookTimes, 0.99), "p99-hook-ms")
		})
	}
}

// runClaude runs `claude -p` once, offline: its model is the mock, anything
// else it tries to reach hits a proxy that refuses and is reported.
// It returns the PreToolUse hooks' durations as Claude Code recorded them in
// the session's transcript (hook_success's durationMs, command hooks only).
func runClaude(b *testing.B, cli string, settings map[string]any, modelURL, gatehouseURL, token string, turns int) []time.Duration {
	b.Helper()
	var mu sync.Mutex
	var strays []string
	trap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		strays = append(strays, r.Method+" "+r.Host)
		mu.Unlock()
		http.Error(w, "no internet in benchmarks", http.StatusForbidden)
	}))
	defer trap.Close()
	home, project := b.TempDir(), b.TempDir()
	raw, err := json.Marshal(settings)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), raw, 0o600); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "-p", "Run the command.", "--max-turns", strconv.Itoa(turns))
	cmd.Dir = project
	cmd.Env = []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir(), "TERM=dumb", "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + modelURL, "ANTHROPIC_API_KEY=sk-ant-gatehouse-bench-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1",
		"HTTPS_PROXY=" + trap.URL, "HTTP_PROXY=" + trap.URL, "NO_PROXY=127.0.0.1,localhost",
		"GATEHOUSE_URL=" + gatehouseURL, "GATEHOUSE_TOKEN=" + token,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err = cmd.Run()
	if left := syscall.Kill(-cmd.Process.Pid, 0); !errors.Is(left, syscall.ESRCH) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		b.Fatalf("claude -p: %v\n%s", err, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(strays) > 0 {
		b.Fatalf("the CLI tried to reach past the mock: %v", strays)
	}
	return hookDurations(b, filepath.Join(home, ".claude", "projects"))
}

// hookDurations reads the durationMs of every PreToolUse hook_success in the
// transcripts under dir.
func hookDurations(b *testing.B, dir string) []time.Duration {
	b.Helper()
	var out []time.Duration
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			var entry struct {
				Attachment struct {
					Type       string `json:"type"`
					HookEvent  string `json:"hookEvent"`
					DurationMs *int64 `json:"durationMs"`
				} `json:"attachment"`
			}
			if json.Unmarshal(line, &entry) != nil {
				continue
			}
			if a := entry.Attachment; a.Type == "hook_success" && a.HookEvent == "PreToolUse" && a.DurationMs != nil {
				out = append(out, time.Duration(*a.DurationMs)*time.Millisecond)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// stampModel is the Anthropic mock asking for `date +%s%N` n times, one
// per turn, noting when each ask was sent.
type stampModel struct {
	*modelmock.Anthropic

	mu   sync.Mutex
	sent map[string]time.Time // tool_use id -> when its stream was flushed
}

func newStampModel(b *testing.B, n int) *stampModel {
	m := &stampModel{sent: map[string]time.Time{}}
	cmds := make([]string, n)
	for i := range cmds {
		cmds[i] = "date +%s%N"
	}
	m.Anthropic = modelmock.StartAnthropic(b, modelmock.AnthropicConfig{Commands: cmds, Sent: func(id string) {
		m.mu.Lock()
		m.sent[id] = time.Now()
		m.mu.Unlock()
	}})
	return m
}

// latencies are, per tool call that ran, the time from its ask to its run.
func (m *stampModel) latencies(b *testing.B) []time.Duration {
	var errs []string
	ran := map[string]string{} // tool_use id -> what the command printed
	for _, r := range m.FinalResults() {
		if r.IsError {
			errs = append(errs, r.ToolUseID+": "+r.Content)
		} else {
			ran[r.ToolUseID] = r.Content
		}
	}
	if len(errs) > 0 {
		b.Fatalf("tool calls failed: %v", errs)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	for id, printed := range ran {
		ns, err := strconv.ParseInt(strings.TrimSpace(printed), 10, 64)
		if err != nil {
			b.Fatalf("%s printed %q", id, printed)
		}
		sent, ok := m.sent[id]
		if !ok {
			b.Fatalf("a result for %s, never asked", id)
		}
		out = append(out, time.Unix(0, ns).Sub(sent))
	}
	return out
}
