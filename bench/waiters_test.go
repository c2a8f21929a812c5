package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/client"
)

// gatehouse is a `gatehouse serve` process started for a benchmark.
type gatehouse struct {
	URL      string
	Database string
	bin      string
	cmd      *exec.Cmd
}

// startGatehouse builds the binary and runs `serve` on a free port and a fresh
// SQLite file (or the database given), with extra flags.
func startGatehouse(b testing.TB, database string, flags ...string) *gatehouse {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "gatehouse")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/gatehouse").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	if database == "" {
		database = "sqlite:" + filepath.Join(dir, "gatehouse.db")
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--database", database}, flags...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		b.Fatal("serve printed nothing")
	}
	url := strings.TrimPrefix(sc.Text(), "gatehouse listening on ")
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return &gatehouse{URL: url, Database: database, bin: bin, cmd: cmd}
}

// token creates a token with the CLI, against the server's database.
func (g *gatehouse) token(b testing.TB, role, name string) string {
	b.Helper()
	out, err := exec.Command(g.bin, "token", "create", "--role", role, "--name", name, "--database", g.Database).Output()
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// rssKB reads the process's resident memory.
func (g *gatehouse) rssKB(b testing.TB) int {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// waiters reads the server's gatehouse_waiters gauge.
func waiters(b testing.TB, op *client.Client) int {
	b.Helper()
	req, _ := http.NewRequest("GET", op.BaseURL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+op.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "gatehouse_waiters "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return -1
}

// BenchmarkIdleWaiters holds 10,000 idle long-polls on one `gatehouse serve`
// process and reports its resident memory per waiter, then decides the request
// they wait on and reports how long until the last of them is answered.
func BenchmarkIdleWaiters(b *testing.B) {
	const n = 10000
	for range b.N {
		g := startGatehouse(b, "", "--max-waiters-per-caller", strconv.Itoa(n))
		agent := client.New(g.URL, g.token(b, "agent", "bench"))
		agent.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
		op := client.New(g.URL, g.token(b, "operator", "op"))
		ctx := context.Background()
		r, err := agent.File(ctx, client.NewRequest{Title: "bench", Options: []client.Option{{ID: "ok", Label: "OK", Effect: "allow"}}}, "")
		if err != nil {
			b.Fatal(err)
		}
		before := g.rssKB(b)
		var wg sync.WaitGroup
		done := make(chan time.Time, n)
		for range n {
			wg.Go(func() {
				if _, err := agent.Wait(ctx, r.ID, 300*time.Second); err != nil {
					b.Error(err)
				}
				done <- time.Now()
			})
		}
		for waiters(b, op) < n { // a benchmark's set-up may look; tests may not
			time.Sleep(100 * time.Millisecond)
		}
		after := g.rssKB(b)
		decided := time.Now()
		if _, err := op.Decide(ctx, r.ID, 1, "ok", ""); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
		var last time.Time
		for range n {
			if t := <-done; t.After(last) {
				last = t
			}
		}
		b.ReportMetric(float64(after)/1024, "rss-MB")
		b.ReportMetric(float64(after-before)/n, "KB/waiter")
		b.ReportMetric(float64(last.Sub(decided).Milliseconds()), "ms-to-release-all")
	}
}
