package bench_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
	"github.com/labstack/echo/v4"
)

// The PreToolUse Claude Code 2.1.328 sent for `git push origin main`
// (cmd/gatehouse/testdata/claude-code), the rule that approves it, and the
// answer both hooks give.
const (
	preToolUseFixture = "../cmd/gatehouse/testdata/claude-code/pretooluse-bash.json"
	fixtureSession    = "702e15d7-315c-44b7-82f6-6688942c5ad6"
	pushRule          = "  - name: pushes-ok\n    match:\n      tool: Bash\n      command: '^git push origin main$'\n    action: approve\n"
	pushAllowed       = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Allowed in Gatehouse by rule:pushes-ok"}}` + "\n"
)

// hookServer is a Gatehouse with rules and an agent token whose echo notes
// how long the server spent on each call, from routing to the last byte
// written: the server-side time, without the client or the network.
type hookServer struct {
	*webtest.Env
	token string

	mu     sync.Mutex
	served []time.Duration
}

func newHookServer(b *testing.B, dialect, rules string) *hookServer {
	b.Helper()
	dir := b.TempDir()
	file := filepath.Join(dir, "rules", "rules.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("rules:\n"+rules), 0o600); err != nil {
		b.Fatal(err)
	}
	e := webtest.NewApp(b, app.Config{Database: databaseURL(b, dialect), RulesFile: file})
	s := &hookServer{Env: e, token: e.Token(models.RoleAgent, "hook-bench")}
	// Before any call: echo builds the chain per request from this list.
	e.Server.Echo().Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			d := time.Since(start)
			s.mu.Lock()
			s.served = append(s.served, d)
			s.mu.Unlock()
			return err
		}
	})
	return s
}

// databaseURL is storetest's database of the dialect, or for "sqlite-tmpfs"
// SQLite on /dev/shm: the same commits with an fsync that costs nothing, to
// tell the server's own work from the disk's.
func databaseURL(b *testing.B, dialect string) string {
	b.Helper()
	if dialect != "sqlite-tmpfs" {
		return storetest.URL(b, dialect)
	}
	dir, err := os.MkdirTemp("/dev/shm", "gatehouse-bench")
	if err != nil {
		testkit.Skipf(b, "no tmpfs at /dev/shm for the sqlite-tmpfs case: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return "sqlite:" + dir + "/gatehouse.db"
}

// servedSince sums the server time of the calls after the first n.
func (s *hookServer) servedSince(n int) (time.Duration, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum time.Duration
	for _, d := range s.served[n:] {
		sum += d
	}
	return sum, len(s.served)
}

// freshInputs are the recorded PreToolUse with a new session id each, so
// every call is a new filing, not an idempotent repeat.
func freshInputs(b *testing.B, n int) [][]byte {
	b.Helper()
	fixture, err := os.ReadFile(preToolUseFixture)
	if err != nil {
		b.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = bytes.ReplaceAll(fixture, []byte(fixtureSession), []byte(models.NewID("s")))
	}
	return out
}

// BenchmarkClaudeCodeHook answers a rule-approved PreToolUse (the recorded
// input, a rule approving `git push origin main`, a durable filing each time)
// three ways in one run: Claude Code's "type": "http" hook POSTing to
// /v1/hooks/claude-code over a kept-alive connection and over a new one each
// call, and the agent build's `gatehouse hook claude-code` as the command hook
// runs it (a process, the input on stdin). Reported: p50 and p99 end to end
// (what the caller waits) and server-side (the server's own time on the
// hook's calls), in microseconds.
//
//	go test -run '^$' -bench ClaudeCodeHook$ -benchtime 400x ./bench/
func BenchmarkClaudeCodeHook(b *testing.B) {
	// The agent build, as the README gives it to a machine that only runs
	// agents: once, for every sub-benchmark.
	bin := buildGatehouse(b, filepath.Join(b.TempDir(), "gatehouse"), []string{"CGO_ENABLED=0"}, []string{"-tags", "agent"})
	for _, dialect := range []string{"sqlite", "sqlite-tmpfs", "postgres"} {
		b.Run("http-keepalive/"+dialect, func(b *testing.B) { benchHTTPHook(b, dialect, false) })
		b.Run("http-new-conn/"+dialect, func(b *testing.B) { benchHTTPHook(b, dialect, true) })
		b.Run("command-agent/"+dialect, func(b *testing.B) { benchCommandHook(b, bin, dialect) })
	}
}

func benchHTTPHook(b *testing.B, dialect string, newConn bool) {
	s := newHookServer(b, dialect, pushRule)
	tr := &http.Transport{DisableKeepAlives: newConn}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: testkit.CapWait}
	url := s.URL + "/v1/hooks/claude-code?timeout=300"
	inputs := freshInputs(b, b.N+1)
	post := func(body []byte) string {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		// What Claude Code sends: the input as JSON, the token from the
		// settings' headers.
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.token)
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("%d %s: %v", res.StatusCode, out, err)
		}
		return string(out)
	}
	post(inputs[b.N]) // the first call opens the connection and warms the caches
	ends, served := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	_, n := s.servedSince(0)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		out := post(inputs[i])
		end := time.Since(start)
		b.StopTimer()
		if out != pushAllowed {
			b.Fatalf("call %d answered %q, want %q", i, out, pushAllowed)
		}
		var srv time.Duration
		srv, n = s.servedSince(n)
		ends, served = append(ends, end), append(served, srv)
		b.StartTimer()
	}
	b.StopTimer()
	reportHookPercentiles(b, ends, served)
}

func benchCommandHook(b *testing.B, bin, dialect string) {
	s := newHookServer(b, dialect, pushRule)
	dir := b.TempDir()
	input := filepath.Join(dir, "input.json")
	inputs := freshInputs(b, b.N)
	ends, served := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	_, n := s.servedSince(0)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		if err := os.WriteFile(input, inputs[i], 0o600); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		end, out := runHookOnce(b, []string{bin, "hook", "claude-code"}, s.URL, s.token, input)
		b.StopTimer()
		if out != pushAllowed {
			b.Fatalf("run %d printed %q, want %q", i, out, pushAllowed)
		}
		var srv time.Duration
		srv, n = s.servedSince(n)
		ends, served = append(ends, end), append(served, srv)
		b.StartTimer()
	}
	b.StopTimer()
	reportHookPercentiles(b, ends, served)
}

func reportHookPercentiles(b *testing.B, ends, served []time.Duration) {
	p := func(lat []time.Duration, q float64) float64 {
		s := slices.Clone(lat)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(p(ends, 0.50), "p50-end-µs")
	b.ReportMetric(p(ends, 0.99), "p99-end-µs")
	b.ReportMetric(p(served, 0.50), "p50-server-µs")
	b.ReportMetric(p(served, 0.99), "p99-server-µs")
}
