//go:build linux

package bench

import (
	"bytes"
	"context"
	"fmt"
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

// clockTicks is the unit of /proc/PID/stat's CPU times (USER_HZ; 100 on Linux).
const clockTicks = 100

// cpuTicks reads a process's user and system CPU time, in clock ticks.
func cpuTicks(b testing.TB, pid int) int {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name (which may hold spaces): state is
	// the first, utime the 12th, stime the 13th.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, err1 := strconv.Atoi(f[11])
	stime, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	return utime + stime
}

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
// they wait on and reports how long until the last of them is answered:
// ms-to-release-all until the last client holds its answer (the clients'
// own 10,000 goroutines share the machine with the server), and
// ms-server-sent-all until the kernel received the last answer the server
// wrote (each socket's receive timestamp, taken inside the server's write on
// loopback), both from just before the decide is sent; server-cpu-ms is the
// CPU the server spent meanwhile.
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
		// light client (one recvmsg per segment, no buffered reader until the
		// answer is in), so the release time is mostly the server's.
		addr := strings.TrimPrefix(g.URL(), "http://")
		var wg sync.WaitGroup
		answers := make(chan answer, n)
		conns := make([]*stampedConn, 0, n)
		for range n {
			c, err := dialStamped(addr)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c.c, "GET /v1/requests/%s/wait?timeout=300 HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", r.ID, addr, agent.Token)
			conns = append(conns, c)
			wg.Go(func() {
				// The client closes only at the end: its closes are its own
				// cost, not the server's, and would crowd the reads timed here.
				a, err := c.readAnswer()
				if err != nil {
					b.Errorf("a waiter's answer: %v", err)
				}
				answers <- a
			})
		}
		g.AwaitWaiters(b, opToken, n)
		atOnce := rssKB(b, g.Pid())
		time.Sleep(idleFor) // idle is a span of time: the figure is memory held while nothing happens
		after := rssKB(b, g.Pid())
		cpu := cpuTicks(b, g.Pid())
		decided := time.Now()
		if _, err := op.Decide(ctx, r.ID, 1, "ok", ""); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
		cpu = cpuTicks(b, g.Pid()) - cpu
		for _, c := range conns {
			c.c.Close()
		}
		var held, sent time.Time
		for range n {
			a := <-answers
			if err := a.check(); err != nil {
				b.Fatalf("a waiter's answer: %v", err)
			}
			if a.held.After(held) {
				held = a.held
			}
			if a.rx.After(sent) {
				sent = a.rx
			}
		}
		b.ReportMetric(float64(after)/1024, "rss-MB")
		b.ReportMetric(float64(after-before)/n, "KB/waiter")
		b.ReportMetric(float64(atOnce-before)/n, "KB/waiter-at-once")
		b.ReportMetric(float64(held.Sub(decided).Milliseconds()), "ms-to-release-all")
		b.ReportMetric(float64(sent.Sub(decided).Milliseconds()), "ms-server-sent-all")
		b.ReportMetric(float64(cpu)*1000/float64(clockTicks), "server-cpu-ms")
	}
}
