package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// writeClients is the concurrency of the write figures, as in the side-by-side
// run against ntfy.
const writeClients = 16

// BenchmarkFilings measures durable filings per second by 16 clients over
// HTTP (POST /v1/requests through the production assembly); each 201 is
// committed. Reported as filings/s. The rule-approved runs file under a rules
// file that approves every filing at once, as a hook's allow-listed command
// is: the decision is in the filing's own commit.
func BenchmarkFilings(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, ruled := range []bool{false, true} {
			name := dialect
			if ruled {
				name += "-rule-approved"
			}
			b.Run(name, func(b *testing.B) {
				cfg := app.Config{Database: storetest.URL(b, dialect)}
				if ruled {
					cfg.RulesFile = approveAllRules(b)
				}
				w := newWriter(webtest.NewApp(b, cfg))
				runWriters(b, "filings/s", func() error {
					_, err := w.file()
					return err
				})
			})
		}
	}
}

// approveAllRules writes a rules file, in a directory of its own (the server
// watches the directory), whose one rule approves every approval request.
func approveAllRules(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "rules", "rules.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.Fatal(err)
	}
	src := "rules:\n  - name: all\n    match: {kind: approval}\n    action: approve\n    option: once\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkFileDecidePairs measures file-then-decide pairs per second by 16
// clients over HTTP, each decide by an operator token. Reported as pairs/s.
func BenchmarkFileDecidePairs(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			e := webtest.New(b, dialect, web.Config{})
			w := newWriter(e)
			runWriters(b, "pairs/s", func() error {
				id, err := w.file()
				if err != nil {
					return err
				}
				return w.decide(id)
			})
		})
	}
}

// runWriters runs op b.N times across writeClients goroutines and reports the
// rate as metric.
func runWriters(b *testing.B, metric string, op func() error) {
	b.Helper()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	for range writeClients {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), metric)
	// On a shared machine the rate follows the CPU share this process gets;
	// the CPU each op costs (server and client together) is the steadier figure.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writer files and decides over HTTP with one shared keep-alive pool.
type writer struct {
	url, agent, op string
	http           *http.Client
}

func newWriter(e *webtest.Env) *writer {
	return &writer{
		url: e.URL, agent: e.Token(models.RoleAgent, "bench-agent"), op: e.Token(models.RoleOperator, "bench-op"),
		http: &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, DisableCompression: true}},
	}
}

var fileBody = mustJSON(map[string]any{"kind": "approval", "title": "bench", "options": []map[string]any{
	{"id": "once", "label": "Allow once", "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}}})

var decideBody = mustJSON(map[string]any{"version": 1, "decision": "once"})

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (w *writer) file() (string, error) {
	var rec struct {
		ID string `json:"id"`
	}
	if err := w.post("/v1/requests", w.agent, fileBody, http.StatusCreated, &rec); err != nil {
		return "", err
	}
	return rec.ID, nil
}

func (w *writer) decide(id string) error {
	return w.post("/v1/requests/"+id+"/decide", w.op, decideBody, http.StatusOK, nil)
}

func (w *writer) post(path, token string, body []byte, want int, out any) error {
	req, err := http.NewRequest(http.MethodPost, w.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
