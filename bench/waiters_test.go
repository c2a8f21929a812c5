package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
)

// idleFor is how long the idle waiters are held before their memory is read.
const idleFor = 3 * time.Second

// rssKB reads a process's resident memory.
func rssKB(b testing.TB, pid int) int {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
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

// BenchmarkIdleWaiters holds 10,000 idle long-polls on one `gatehouse serve`
// process and reports its resident memory per waiter, then decides the request
// they wait on and reports how long until the last of them is answered.
// KB/waiter is read once the waits have been idle for idleFor (the server
// returns the memory a burst of parking leaves behind after a second of
// quiet; the side-by-side reads after 5 s); KB/waiter-at-once right when the
// last is held.
func BenchmarkIdleWaiters(b *testing.B) {
	const n = 10000
	bin := gatehousetest.Build(b)
	for range b.N {
		database := "sqlite:" + filepath.Join(b.TempDir(), "gatehouse.db")
		g := gatehousetest.Start(b, bin, database, "--max-waiters-per-caller", strconv.Itoa(n))
		agent := client.New(g.URL(), gatehousetest.Token(b, bin, database, "agent", "bench"))
		opToken := gatehousetest.Token(b, bin, database, "operator", "op")
		op := client.New(g.URL(), opToken)
		ctx := context.Background()
		r, err := agent.File(ctx, api.NewRequest{Title: "bench", Options: []api.Option{{ID: "ok", Label: "OK", Effect: "allow"}}}, "")
		if err != nil {
			b.Fatal(err)
		}
		before := rssKB(b, g.Pid())
		// One raw TCP connection per waiter, as the side-by-side holds them: a
		// light client, so the release time is mostly the server's.
		addr := strings.TrimPrefix(g.URL(), "http://")
		var wg sync.WaitGroup
		done := make(chan time.Time, n)
		for range n {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "GET /v1/requests/%s/wait?timeout=300 HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", r.ID, addr, agent.Token)
			wg.Go(func() {
				defer c.Close()
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
				}
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Errorf("a waiter's answer: %v", err)
				}
				done <- time.Now()
			})
		}
		g.AwaitWaiters(b, opToken, n)
		atOnce := rssKB(b, g.Pid())
		time.Sleep(idleFor) // idle is a span of time: the figure is memory held while nothing happens
		after := rssKB(b, g.Pid())
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
		b.ReportMetric(float64(atOnce-before)/n, "KB/waiter-at-once")
		b.ReportMetric(float64(last.Sub(decided).Milliseconds()), "ms-to-release-all")
	}
}
