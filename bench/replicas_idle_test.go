package bench_test

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sbsIdle is how many idle waiters are held.
const sbsIdle = 10000

// sbsIdleFor is how long after the last wait is held the memory is read:
// 5 s after sending the last one.
const sbsIdleFor = 5 * time.Second

// idle files sbsIdle requests, holds one long-poll on each over raw TCP
// (replica i mod replicas holds wait i), and reports the servers' VmRSS and
// Go heap growth per waiter, summed over the replicas: once every wait is
// held (at-once) and sbsIdleFor later.
func (r *replicaSet) idle(b *testing.B) {
	for b.Loop() {
		ids := r.fileMany(b, sbsIdle)
		r.http.CloseIdleConnections() // the filers' connections are not waiters
		rss0, heap0 := r.memory(b)
		conns := r.hold(b, ids)
		for j, s := range r.srv {
			s.AwaitWaiters(b, r.op, r.share(j, len(ids)))
		}
		rss1, _ := r.memory(b)
		time.Sleep(sbsIdleFor) // idle is a span of time: the figure is memory held while nothing happens
		rss2, heap2 := r.memory(b)
		for _, c := range conns {
			c.Close()
		}
		for _, s := range r.srv { // hung-up waits are dropped before the next round
			s.AwaitWaiters(b, r.op, 0)
		}
		n := float64(len(conns))
		b.ReportMetric(float64(rss2-rss0)/n, "KiB/waiter")
		b.ReportMetric(float64(rss1-rss0)/n, "KiB/waiter-at-once")
		b.ReportMetric(float64(heap2-heap0)/1024/n, "heap-KiB/waiter")
	}
}

// share is how many of n waits replica j holds.
func (r *replicaSet) share(j, n int) int {
	k := len(r.srv)
	if j < n%k {
		return n/k + 1
	}
	return n / k
}

// memory sums the replicas' VmRSS (KiB) and Go heap in use (bytes).
func (r *replicaSet) memory(b *testing.B) (rssKiB int, heapBytes float64) {
	for _, s := range r.srv {
		rssKiB += procRSS(b, s.Pid())
		heapBytes += s.Metric(b, r.op, "go_memstats_heap_inuse_bytes")
	}
	return rssKiB, heapBytes
}

// fileMany files n requests by sbsClients clients spread over the replicas.
func (r *replicaSet) fileMany(b *testing.B, n int) []string {
	ids := make([]string, n)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range sbsClients {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				id, err := r.file(r.srv[i%len(r.srv)].URL())
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return ids
}

// hold opens one raw TCP connection per id on replica i mod replicas and
// sends its /wait, by 32 openers; nothing reads the
// answers, so the client holds no goroutine per wait.
func (r *replicaSet) hold(b *testing.B, ids []string) []net.Conn {
	conns := make([]net.Conn, len(ids))
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				addr := strings.TrimPrefix(r.srv[i%len(r.srv)].URL(), "http://")
				c, err := net.Dial("tcp", addr)
				if err == nil {
					_, err = fmt.Fprintf(c, "GET /v1/requests/%s/wait?timeout=300 HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", ids[i], addr, r.agent)
				}
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		b.Fatal(err)
	}
	return conns
}
