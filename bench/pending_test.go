// Package bench holds Gatehouse's load benchmarks: numbers, not pass/fail tests.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/web"
)

// BenchmarkPendingLoad measures unrelated calls (file, get, decide) on one
// server first idle, then while 100 (and, on a second server, 10,000) agents
// long-poll their pending grants; one process over loopback, SQLite. Idle and
// loaded run minutes apart on the same server and database, so the ratio of
// their p99s is the cost of the parked waits. Run:
//
//	go test -run '^$' -bench PendingLoad -benchtime 2000x ./bench/
//
// 100 waiters hold one HTTP/1.1 connection each. 10,000 would need 20,000
// descriptors in one process (client and server ends) against a hard limit of
// 20,000 here, so they long-poll over cleartext HTTP/2, many streams per
// connection, as a middleware fronting many agents would. The server still
// holds 10,000 waits, each with its own handler goroutine and watch.
func BenchmarkPendingLoad(b *testing.B) {
	pendingRaiseFDLimit(b)
	slog.SetDefault(slog.New(slog.DiscardHandler)) // a line per filed grant would drown the numbers
	for _, n := range []int{100, 10000} {
		env := newPendingBench(b, n)
		for _, phase := range []string{"idle", "loaded"} {
			if phase == "loaded" {
				env.park(b)
			}
			for _, op := range []struct {
				name string
				call func(b *testing.B) time.Duration
			}{{"file", env.fileOne}, {"get", env.getOne}, {"decide", env.decideOne}} {
				b.Run(fmt.Sprintf("waiters=%d/%s/%s", n, phase, op.name), func(b *testing.B) {
					lat := make([]time.Duration, 0, b.N)
					for b.Loop() {
						lat = append(lat, op.call(b))
					}
					pendingReport(b, lat)
				})
			}
		}
		env.close(b)
	}
}

// pendingBench is one server with n parked long-polls.
type pendingBench struct {
	store    *store.Store
	srv      *web.Server
	http     *http.Server
	base     string
	client   *http.Client // unrelated calls: HTTP/1.1 keep-alive
	agent    string
	operator string
	known    string   // a request id for get
	ids      []string // pending grants to wait on
	secrets  []string // the runtime token of each
	waiters  *http.Client
	waits    sync.WaitGroup
	parked   *pendingCounter
}

// pendingCounter is the real Changes, counting watches so setup knows when
// every wait is parked without polling.
type pendingCounter struct {
	*store.Changes
	n, want atomic.Int64
	all     chan struct{}
}

func (c *pendingCounter) WatchFunc(id string, f func(models.Change)) func() bool {
	stop := c.Changes.WatchFunc(id, f)
	if c.n.Add(1) == c.want.Load() {
		close(c.all)
	}
	return stop
}

func newPendingBench(b *testing.B, n int) *pendingBench {
	b.Helper()
	db, err := store.OpenDB("sqlite:" + b.TempDir() + "/bench.db")
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Migrate(db); err != nil {
		b.Fatal(err)
	}
	changes := store.NewChanges()
	e := &pendingBench{store: store.NewStore(db, changes), parked: &pendingCounter{Changes: changes, all: make(chan struct{})}}
	e.parked.want.Store(int64(n))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	e.base = "http://" + ln.Addr().String()
	e.srv, err = web.New(web.Config{BaseURL: e.base, MaxWaiters: 20000, MaxWaitersPerCaller: 1000, FilingRate: math.Inf(1)},
		web.Deps{Store: e.store, Watcher: e.parked, Grants: e.store})
	if err != nil {
		b.Fatal(err)
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	e.http = &http.Server{Handler: e.srv.Handler(), Protocols: protocols, ReadHeaderTimeout: 10 * time.Second}
	go e.http.Serve(ln)
	e.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	ctx := context.Background()
	_, e.agent, _ = e.store.CreateToken(ctx, models.RoleAgent, "bench-agent")
	_, e.operator, _ = e.store.CreateToken(ctx, models.RoleOperator, "bench-operator")
	e.known = e.fileRequest(b)

	// One runtime token per 500 agents keeps each under the per-caller cap.
	var secret string
	var rt models.Principal
	ids := make([]string, n)
	secrets := make([]string, n)
	for i := range n {
		if i%500 == 0 {
			tok, s, err := e.store.CreateToken(ctx, models.RoleRuntime, fmt.Sprintf("mw-%d", i/500))
			if err != nil {
				b.Fatal(err)
			}
			rt, secret = tok.Principal(), s
		}
		g, _, err := e.store.CreatePending(ctx, rt, models.NewGrant{Target: models.Target{
			Sandbox: fmt.Sprintf("sb-%d", i), Method: "PUT", Host: "api.github.com", Port: 443,
			Path: "/repos/acme/widgets/pulls/7/merge", BodySHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		}, Policy: "github-merge", Middleware: "bench", MaxWait: 30 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		ids[i], secrets[i] = g.PendingID, secret
	}
	e.ids, e.secrets = ids, secrets
	return e
}

// park starts one long-poll per pending grant and returns when every one is
// watching its request.
func (e *pendingBench) park(b *testing.B) {
	n := len(e.ids)
	start := time.Now()
	tr := &http.Transport{MaxIdleConnsPerHost: n, ReadBufferSize: 1024, WriteBufferSize: 1024}
	if n > 1000 {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	e.waiters = &http.Client{Transport: tr}
	for i := range n {
		e.waits.Go(func() {
			req, _ := http.NewRequest("GET", e.base+"/v1/pending/"+e.ids[i]+"/wait?timeout=300", nil)
			req.Header.Set("Authorization", "Bearer "+e.secrets[i])
			res, err := e.waiters.Do(req)
			if err != nil {
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		})
	}
	select {
	case <-e.parked.all:
	case <-time.After(10 * time.Minute):
		b.Fatalf("only %d of %d waits parked", e.parked.n.Load(), n)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("waiters=%d parked in %v: goroutines %d, heap in use %.0f MB, sys %.0f MB",
		n, time.Since(start).Round(time.Millisecond), runtime.NumGoroutine(), float64(ms.HeapInuse)/1e6, float64(ms.Sys)/1e6)
}

func (e *pendingBench) close(b *testing.B) {
	e.srv.Close() // releases every wait
	e.waits.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.http.Shutdown(ctx); err != nil {
		b.Logf("shutdown: %v", err)
	}
	e.client.CloseIdleConnections()
	if e.waiters != nil {
		e.waiters.CloseIdleConnections()
	}
	if sqlDB, err := e.store.DB.DB(); err == nil {
		sqlDB.Close()
	}
}

// do sends one call and fails the benchmark on a status other than want.
func (e *pendingBench) do(b *testing.B, method, path, token string, in any, want int, out any) time.Duration {
	var body io.Reader
	if in != nil {
		buf, _ := json.Marshal(in)
		body = bytes.NewReader(buf)
	}
	req, _ := http.NewRequest(method, e.base+path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := e.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if res.StatusCode != want {
		b.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			b.Fatal(err)
		}
	}
	return took
}

var pendingNewRequest = map[string]any{
	"kind": "permission", "title": "Run git push", "tool": "Bash", "command": "git push origin main",
	"options": []map[string]string{{"id": "once", "label": "Allow once", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}},
}

func (e *pendingBench) fileRequest(b *testing.B) string {
	var r struct{ ID string }
	e.do(b, "POST", "/v1/requests", e.agent, pendingNewRequest, http.StatusCreated, &r)
	return r.ID
}

func (e *pendingBench) fileOne(b *testing.B) time.Duration {
	return e.do(b, "POST", "/v1/requests", e.agent, pendingNewRequest, http.StatusCreated, nil)
}

func (e *pendingBench) getOne(b *testing.B) time.Duration {
	return e.do(b, "GET", "/v1/requests/"+e.known, e.agent, nil, http.StatusOK, nil)
}

// decideOne files a request (not timed) and times its decide.
func (e *pendingBench) decideOne(b *testing.B) time.Duration {
	b.StopTimer()
	id := e.fileRequest(b)
	b.StartTimer()
	return e.do(b, "POST", "/v1/requests/"+id+"/decide", e.operator, map[string]any{"version": 1, "decision": "once"}, http.StatusOK, nil)
}

// pendingReport reports the latency percentiles in milliseconds.
func pendingReport(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// pendingRaiseFDLimit lifts the soft descriptor limit to the hard one.
func pendingRaiseFDLimit(b *testing.B) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Logf("getrlimit: %v", err)
		return
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Logf("setrlimit: %v", err)
	}
}
