// Package gatehousetest runs the real gatehouse binary for tests and benchmarks
// that need separate processes (replicas on one database): build it, start
// `gatehouse serve` on a free port, create tokens with `gatehouse token create`.
package gatehousetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/client"
)

// guard bounds how long a helper waits for a process before failing the test;
// a deadline for a hang, not a speed assertion.
const guard = 2 * time.Minute

// Build compiles the gatehouse command into the test's temporary directory,
// with go build's flags (such as "-tags", "agent") if any.
func Build(t testing.TB, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gatehouse")
	args := append(append([]string{"build", "-o", bin}, flags...), "github.com/gatehousehq/gatehouse/cmd/gatehouse")
	cmd := exec.Command("go", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Token creates a token with `gatehouse token create` and returns its secret.
func Token(t testing.TB, bin, database, role, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var stdout, stderr bytes.Buffer
	// --create: a test may make its tokens before the first serve.
	cmd := exec.CommandContext(ctx, bin, "token", "create", "--role", role, "--name", name, "--database", database, "--create")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("token create %s: %v\n%s", role, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// Server is one `gatehouse serve` process.
type Server struct {
	cmd     *exec.Cmd
	stdout  *lines
	stderr  *lines
	url     string
	exited  chan struct{} // closed when the process has ended
	exitErr error
	http    *http.Client // shared by the server's clients
}

// Launch starts `gatehouse serve` on a free local port with the database and
// extra flags; Ready waits until it listens. The process is killed at cleanup.
func Launch(t testing.TB, bin, database string, flags ...string) *Server {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database", database}, flags...)
	s := &Server{
		cmd: exec.Command(bin, args...), stdout: newLines(), stderr: newLines(), exited: make(chan struct{}),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	}
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start gatehouse serve: %v", err)
	}
	go func() { s.exitErr = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		s.http.CloseIdleConnections()
		_ = s.cmd.Process.Kill()
		<-s.exited
		if t.Failed() {
			t.Logf("gatehouse serve %s stderr:\n%s", s.url, s.stderr.String())
		}
	})
	return s
}

// Start launches a server and waits until it listens.
func Start(t testing.TB, bin, database string, flags ...string) *Server {
	t.Helper()
	s := Launch(t, bin, database, flags...)
	s.Ready(t)
	return s
}

// listening is the line serve prints once it accepts connections.
const listening = "gatehouse listening on "

// Ready waits for the "gatehouse listening on URL" line and returns the URL.
func (s *Server) Ready(t testing.TB) string {
	t.Helper()
	if s.url != "" {
		return s.url
	}
	select {
	case line := <-s.stdout.match:
		s.url = strings.TrimSpace(strings.TrimPrefix(line, listening))
		return s.url
	case <-s.exited:
		t.Fatalf("gatehouse serve exited before listening: %v\n%s", s.exitErr, s.stderr.String())
	case <-time.After(guard):
		t.Fatalf("gatehouse serve did not listen\n%s", s.stderr.String())
	}
	return ""
}

// URL is the server's base URL (after Ready).
func (s *Server) URL() string { return s.url }

// Client returns a client for the server with token.
func (s *Server) Client(token string) *client.Client {
	c := client.New(s.url, token)
	c.HTTP = s.http
	return c
}

// Stderr is what the process logged so far.
func (s *Server) Stderr() string { return s.stderr.String() }

// lines collects a process's output and hands over the first line that starts
// with the listening prefix.
type lines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	seen  int
	found bool
	match chan string
}

func newLines() *lines {
	return &lines{match: make(chan string, 1)}
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for !l.found {
		rest := l.buf.Bytes()[l.seen:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := string(rest[:i])
		l.seen += i + 1
		if strings.HasPrefix(line, listening) {
			l.found = true
			l.match <- line
		}
	}
	return len(p), nil
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Pid is the process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Kill stops the process at once (no graceful shutdown), as a crash would.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// AwaitWaiters returns once the server holds exactly n long-polls, read from its
// gatehouse_waiters gauge with an operator token. A test calls it between
// starting a wait and making the change the wait must see, so the change cannot
// land before the wait is held; and with n = 0 before starting one, because a
// released wait gives its slot back just after its answer is written. Each look
// is a full scrape, so it reads the gauge a handful of times at most.
func (s *Server) AwaitWaiters(t testing.TB, operatorToken string, n int) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		if s.Metric(t, operatorToken, "gatehouse_waiters") == float64(n) {
			return
		}
	}
	t.Fatalf("%s never held %d waits", s.url, n)
}

// Metric reads one unlabelled metric from /metrics with an operator token.
func (s *Server) Metric(t testing.TB, operatorToken, name string) float64 {
	t.Helper()
	v, err := s.metric(operatorToken, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (s *Server) metric(token, name string) (float64, error) {
	req, err := http.NewRequest(http.MethodGet, s.url+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no %s in /metrics", name)
}
