package bench

import (
	"context"
	"fmt"
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
func BenchmarkIdleWaiters(b *testing.B) {
	const n = 10000
	bin := gatehousetest.Build(b)
	for range b.N {
		database := "sqlite:" + filepath.Join(b.TempDir(), "gatehouse.db")
		g := gatehousetest.Start(b, bin, database, "--max-waiters-per-caller", strconv.Itoa(n))
		agent := client.New(g.URL(), gatehousetest.Token(b, bin, database, "agent", "bench"))
		agent.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
		opToken := gatehousetest.Token(b, bin, database, "operator", "op")
		op := client.New(g.URL(), opToken)
		ctx := context.Background()
		r, err := agent.File(ctx, api.NewRequest{Title: "bench", Options: []api.Option{{ID: "ok", Label: "OK", Effect: "allow"}}}, "")
		if err != nil {
			b.Fatal(err)
		}
		before := rssKB(b, g.Pid())
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
		g.AwaitWaiters(b, opToken, n)
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
		b.ReportMetric(float64(last.Sub(decided).Milliseconds()), "ms-to-release-all")
	}
}
