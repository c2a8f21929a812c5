package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/internal/phase"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// BenchmarkWakeCost is what one wake and one file+decide pair cost the
// process (server and client in one, on loopback), on SQLite and PostgreSQL:
//
//   - cpu-µs/op: user + system CPU (getrusage), counted only while timed;
//   - allocs/op, B/op: the Go heap (b.ReportAllocs);
//   - syscr/op, syscw/op: read- and write-family system calls
//     (/proc/self/io: read, pread, readv… and write, pwrite, writev…; the
//     sockets, SQLite's WAL and database pages), the counter's own read
//     taken off; fsync, epoll and futex calls are not in them (strace -c
//     counts every call: docs/benchmarks.md);
//   - ctxsw/op: context switches (getrusage's voluntary + involuntary).
//
// wake is one decide → the parked /wait answered, sequential (the filing
// and the wait's start are not timed); it also reports the median of each
// phase of the wake in µs, from the server's stamps (internal/phase):
//
//	to-auth      the decide POST sent → the authentication middleware
//	auth         authentication
//	decode       the body decoded
//	check        the store's checks and the action digest
//	join-begin   joining the group commit and BEGIN
//	statements   the transaction's statements
//	commit       COMMIT (SQLite: the WAL frames and the fsync)
//	announce     COMMIT returned → the change announced (PostgreSQL: NOTIFY
//	             and the listener)
//	waiter-wake  the parked waiter taken off its watch, its answer at hand
//	             (encoded while the COMMIT ran)
//	waiter-write its answer's write(2) (on loopback it wakes the client)
//	waiter-held  answer at hand → the waiting client holds it
//	answer       COMMIT returned → the decider's own answer written (on
//	             SQLite the waiter is answered first, on its goroutine)
//
// pair is one file then decide by one client, and pairs-16 the same by 16
// clients at once (group commit shares their COMMITs).
//
//	go test ./bench/ -run '^$' -bench WakeCost -benchtime 2000x
func BenchmarkWakeCost(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect+"/wake", func(b *testing.B) {
			started := make(chan struct{}, 1)
			e := webtest.New(b, dialect, web.Config{OnWaitStart: func() { started <- struct{}{} }})
			agent := client.New(e.URL, e.Token(models.RoleAgent, "bench"))
			agent.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
			op := client.New(e.URL, e.Token(models.RoleOperator, "op"))
			op.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
			ctx := context.Background()
			for range 20 { // warm the connections, caches and prepared statements
				id, got := fileAndWait(b, agent, started)
				if _, err := op.Decide(ctx, id, 1, "ok", ""); err != nil {
					b.Fatal(err)
				}
				<-got
			}
			rec := &stamps{}
			phase.Record(rec.mark)
			b.Cleanup(func() { phase.Record(nil) })
			var cost counters
			var rounds []wakeRound
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				id, got := fileAndWait(b, agent, started)
				rec.reset()
				b.StartTimer()
				c0 := cost.read(b)
				t0 := time.Now()
				if _, err := op.Decide(ctx, id, 1, "ok", ""); err != nil {
					b.Fatal(err)
				}
				held := <-got
				cost.add(b, c0)
				b.StopTimer()
				rounds = append(rounds, wakeRound{t0: t0, held: held, at: rec.taken()})
				b.StartTimer()
			}
			cost.report(b)
			reportPhases(b, rounds)
		})
		b.Run(dialect+"/pair", func(b *testing.B) {
			e := webtest.New(b, dialect, web.Config{})
			w := newWriter(e)
			for range 20 {
				if err := w.pair(); err != nil {
					b.Fatal(err)
				}
			}
			var cost counters
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cost.read(b)
			for b.Loop() {
				if err := w.pair(); err != nil {
					b.Fatal(err)
				}
			}
			cost.add(b, c0)
			cost.report(b)
		})
		b.Run(dialect+"/pairs-16", func(b *testing.B) {
			e := webtest.New(b, dialect, web.Config{})
			w := newWriter(e)
			var cost counters
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cost.read(b)
			var next atomic.Int64
			var failed atomic.Value
			var wg sync.WaitGroup
			for range writeClients {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if err := w.pair(); err != nil {
							failed.CompareAndSwap(nil, err)
							return
						}
					}
				})
			}
			wg.Wait()
			cost.add(b, c0)
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			cost.report(b)
		})
	}
}

func (w *writer) pair() error {
	id, err := w.file()
	if err != nil {
		return err
	}
	return w.decide(id)
}

// sample is the process's counters at one moment.
type sample struct {
	cpu          time.Duration
	ctxsw        int64
	syscr, syscw int64
}

// counters sums the process's counters over the timed stretches.
type counters struct {
	io        *os.File
	overhead  sample // what one read of the counters adds to them
	sum       sample
	stretches int
	buf       [512]byte
}

func (c *counters) read(b *testing.B) sample {
	if c.io == nil {
		f, err := os.Open("/proc/self/io")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		c.io = f
		// Two reads back to back: the second's difference is the cost of one.
		s0 := c.read(b)
		s1 := c.read(b)
		c.overhead = sample{syscr: s1.syscr - s0.syscr, syscw: s1.syscw - s0.syscw}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	n, err := c.io.ReadAt(c.buf[:], 0)
	if n == 0 {
		b.Fatal("read /proc/self/io:", err)
	}
	s := sample{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ctxsw: ru.Nvcsw + ru.Nivcsw}
	for line := range strings.SplitSeq(string(c.buf[:n]), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		x, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscr":
			s.syscr = x
		case "syscw":
			s.syscw = x
		}
	}
	return s
}

// add counts from s0 to now as one timed stretch.
func (c *counters) add(b *testing.B, s0 sample) {
	s := c.read(b)
	c.sum.cpu += s.cpu - s0.cpu
	c.sum.ctxsw += s.ctxsw - s0.ctxsw
	c.sum.syscr += s.syscr - s0.syscr - c.overhead.syscr
	c.sum.syscw += s.syscw - s0.syscw - c.overhead.syscw
	c.stretches++
}

func (c *counters) report(b *testing.B) {
	n := float64(b.N)
	b.ReportMetric(float64(c.sum.cpu.Microseconds())/n, "cpu-µs/op")
	b.ReportMetric(float64(c.sum.syscr)/n, "syscr/op")
	b.ReportMetric(float64(c.sum.syscw)/n, "syscw/op")
	b.ReportMetric(float64(c.sum.ctxsw)/n, "ctxsw/op")
}

// stamps keeps the first time each phase.Step is passed since reset.
type stamps struct{ at [phase.Steps]atomic.Int64 }

func (s *stamps) mark(step phase.Step) { s.at[step].CompareAndSwap(0, time.Now().UnixNano()) }

func (s *stamps) reset() {
	for i := range s.at {
		s.at[i].Store(0)
	}
}

func (s *stamps) taken() (out [phase.Steps]int64) {
	for i := range s.at {
		out[i] = s.at[i].Load()
	}
	return out
}

// wakeRound is one timed wake: sent, the server's stamps, held.
type wakeRound struct {
	t0, held time.Time
	at       [phase.Steps]int64
}

// reportPhases reports the median of each phase of the wake in µs.
func reportPhases(b *testing.B, rounds []wakeRound) {
	const (
		sent = -1
		held = -2
	)
	for _, p := range []struct {
		name     string
		from, to int
	}{
		{"to-auth", sent, int(phase.Received)},
		{"auth", int(phase.Received), int(phase.Authenticated)},
		{"decode", int(phase.Authenticated), int(phase.Decoded)},
		{"check", int(phase.Decoded), int(phase.Checked)},
		{"join-begin", int(phase.Checked), int(phase.Began)},
		{"statements", int(phase.Began), int(phase.Written)},
		{"commit", int(phase.Written), int(phase.Committed)},
		{"announce", int(phase.Committed), int(phase.Announced)},
		{"waiter-wake", int(phase.Announced), int(phase.WaiterReady)},
		{"waiter-write", int(phase.WaiterReady), int(phase.WaiterAnswered)},
		{"waiter-held", int(phase.WaiterReady), held},
		{"answer", int(phase.Committed), int(phase.Answered)},
	} {
		var d []float64
		for _, r := range rounds {
			at := func(i int) int64 {
				switch i {
				case sent:
					return r.t0.UnixNano()
				case held:
					return r.held.UnixNano()
				}
				return r.at[i]
			}
			from, to := at(p.from), at(p.to)
			if from == 0 || to == 0 {
				continue
			}
			d = append(d, float64(to-from)/1e3)
		}
		if len(d) < len(rounds)/2 {
			b.Logf("phase %s: stamped in %d of %d rounds; not reported", p.name, len(d), len(rounds))
			continue
		}
		slices.Sort(d)
		b.ReportMetric(d[len(d)/2], fmt.Sprintf("%s-µs", p.name))
	}
}
