package bench_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// BenchmarkSideBySideReplicas measures five figures on real `gatehouse serve`
// processes sharing one database: one SQLite replica (a baseline), one
// PostgreSQL replica, and two PostgreSQL replicas that wake each other by
// NOTIFY/LISTEN. The figures are the ones a comparison with a pub/sub server
// such as ntfy takes, so the same client can measure both.
//
//   - wake: file on replica A, hold a /wait on the last replica (B with two),
//     decide on A; from just before the decide is sent until the waiting
//     client holds the answer. p50/p99 in ms.
//   - filings, pairs: 16 clients, client i on replica i mod replicas, POST
//     /v1/requests (then its decide, for pairs); each 2xx is committed.
//   - idle: 10,000 held /wait long-polls on raw TCP, one request each, split
//     over the replicas; the servers' VmRSS growth per waiter.
//
// Use a time benchtime; the idle case runs once in it:
//
//	GATEHOUSE_TEST_POSTGRES=postgres://… go test ./bench/ -run '^$' -bench SideBySideReplicas -benchtime 8s -timeout 30m
func BenchmarkSideBySideReplicas(b *testing.B) {
	bin := gatehousetest.Build(b)
	for _, c := range []struct {
		name, dialect string
		replicas      int
	}{
		{"sqlite/1-replica", "sqlite", 1},
		{"postgres/1-replica", "postgres", 1},
		{"postgres/2-replicas", "postgres", 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			database := storetest.URL(b, c.dialect)
			r := startReplicas(b, bin, database, c.replicas)
			b.Run("wake", r.wake)
			b.Run("filings", func(b *testing.B) { r.writes(b, "filings/s", r.fileOnce) })
			b.Run("pairs", func(b *testing.B) { r.writes(b, "pairs/s", r.pairOnce) })
			verifyAudit(b, bin, database)
			b.Run("idle", r.idle)
		})
	}
}

// verifyAudit runs `gatehouse audit verify` on the database the replicas
// wrote, failing the benchmark when any chain does not verify, and prints how
// many entries went on which chains.
func verifyAudit(b *testing.B, bin, database string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "audit", "verify", "--database", database).CombinedOutput()
	if err != nil {
		b.Fatalf("audit verify after the run: %v\n%s", err, out)
	}
	// Printed, not logged: a parent benchmark's log is not shown.
	fmt.Printf("%s audit verify: %s\n", b.Name(), bytes.ReplaceAll(bytes.TrimSpace(out), []byte("\n"), []byte("; ")))
}

// sideBySideFlags lift the per-token limits, as a comparison lifts ntfy's
// visitor limits: it files everything with one agent token.
var sideBySideFlags = []string{"--max-waiters", "50000", "--max-waiters-per-caller", "50000",
	"--filing-rate", "1000000", "--filing-burst", "1000000"}

// replicaSet is n serve processes on one database and the tokens the
// benchmark uses.
type replicaSet struct {
	srv       []*gatehousetest.Server
	agent, op string
	http      *http.Client
}

func startReplicas(b *testing.B, bin, database string, n int) *replicaSet {
	b.Helper()
	r := &replicaSet{http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true}}}
	b.Cleanup(r.http.CloseIdleConnections)
	for range n {
		r.srv = append(r.srv, gatehousetest.Launch(b, bin, database, sideBySideFlags...))
	}
	for _, s := range r.srv { // launched together: they migrate concurrently, as compose starts them
		s.Ready(b)
	}
	r.agent = gatehousetest.Token(b, bin, database, "agent", "bench-agent")
	r.op = gatehousetest.Token(b, bin, database, "operator", "bench-op")
	return r
}

// wake is the wake figure, in sequential rounds. The wait is confirmed
// held through the waiter gauge before the decide (not a sleep).
func (r *replicaSet) wake(b *testing.B) {
	a, w := r.srv[0], r.srv[len(r.srv)-1]
	rig := replicaRig{opToken: r.op, waitSrv: w, waitWith: w.Client(r.agent),
		filer: a.Client(r.agent), decider: a.Client(r.op)}
	for range 50 { // warm-up rounds
		rig.once(b)
	}
	lat := make([]time.Duration, 0, 1000)
	for b.Loop() {
		d, _ := rig.once(b)
		lat = append(lat, d)
	}
	reportPercentiles(b, "wake", lat)
}

// The request bodies.
var (
	sbsFile   = []byte(`{"kind":"approval","title":"bench","options":[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]}`)
	sbsDecide = []byte(`{"version":1,"decision":"once"}`)
)

func (r *replicaSet) fileOnce(client int) error {
	_, err := r.file(r.srv[client%len(r.srv)].URL())
	return err
}

func (r *replicaSet) pairOnce(client int) error {
	base := r.srv[client%len(r.srv)].URL()
	id, err := r.file(base)
	if err != nil {
		return err
	}
	_, err = r.post(base+"/v1/requests/"+id+"/decide", r.op, sbsDecide, http.StatusOK)
	return err
}

// file files one request on the replica at base and answers its id.
func (r *replicaSet) file(base string) (string, error) {
	body, err := r.post(base+"/v1/requests", r.agent, sbsFile, http.StatusCreated)
	if err != nil {
		return "", err
	}
	// The id is the first field of the record; a scan is enough and keeps the
	// client's CPU out of the figure.
	const key = `"id":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return "", fmt.Errorf("no id in %s", body)
	}
	rest := body[i+len(key):]
	return string(rest[:bytes.IndexByte(rest, '"')]), nil
}

func (r *replicaSet) post(url, token string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, data)
	}
	return data, nil
}

// sbsClients is the write concurrency.
const sbsClients = 16

// writes runs op b.N times over sbsClients clients and reports the rate as
// metric and the servers' CPU per operation (steadier than the rate on a
// shared machine).
func (r *replicaSet) writes(b *testing.B, metric string, op func(client int) error) {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	cpu0 := r.cpu(b)
	b.ResetTimer()
	start := time.Now()
	for c := range sbsClients {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(c); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), metric)
	b.ReportMetric(float64((r.cpu(b)-cpu0).Microseconds())/float64(b.N), "server-cpu-µs/op")
}

// cpu is the user and system CPU the replicas have used.
func (r *replicaSet) cpu(b *testing.B) time.Duration {
	var sum time.Duration
	for _, s := range r.srv {
		sum += procCPU(b, s.Pid())
	}
	return sum
}
