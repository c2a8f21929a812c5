package bench

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// BenchmarkWakeFloor asks how much of the wake is the service's own work and
// how much the stack's, in one run of interleaved rounds on the same disk:
//
//	publish    an ntfy-like server: a POST handed to a streaming subscriber,
//	           nothing written (what the side-by-side's ntfy wake measures);
//	dsync      one 4 KiB overwrite of a file opened O_DSYNC beside the
//	           database (the harness's `dd oflag=dsync`);
//	durable    the least a durable release can do here: a POST whose handler
//	           runs BEGIN IMMEDIATE, one UPDATE and COMMIT on SQLite (the
//	           service's driver, WAL and synchronous=FULL), then answers a
//	           waiting long-poll: no authentication, checks or audit entry;
//	gatehouse  the production decide → /wait (BenchmarkWake/sqlite/parked).
//
// The side-by-side's floor is publish + dsync. Medians and p99 in µs.
//
//	go test ./bench/ -run '^$' -bench WakeFloor -benchtime 2000x
func BenchmarkWakeFloor(b *testing.B) {
	dir := b.TempDir()
	fl := newFloorServer(b, filepath.Join(dir, "floor.db"))
	srv := httptest.NewServer(fl.routes())
	b.Cleanup(srv.Close)
	dsf, err := os.OpenFile(filepath.Join(dir, "dsync"), os.O_WRONLY|os.O_CREATE|unix.O_DSYNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { dsf.Close() })
	page := make([]byte, 4096)

	started := make(chan struct{}, 1)
	e := webtest.New(b, "sqlite", web.Config{OnWaitStart: func() { started <- struct{}{} }})
	agent := client.New(e.URL, e.Token(models.RoleAgent, "bench"))
	agent.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
	op := client.New(e.URL, e.Token(models.RoleOperator, "op"))
	op.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	lines := subscribe(b, hc, srv.URL+"/sub")
	ctx := context.Background()
	var pub, ds, dur, gh []time.Duration
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		id := fmt.Sprint("r", round)

		// publish → subscriber
		msg := "m" + id
		t0 := time.Now()
		post(b, hc, srv.URL+"/pub", msg)
		for l := range lines {
			if l.msg == msg {
				pub = append(pub, l.at.Sub(t0))
				break
			}
		}

		// one O_DSYNC page
		t0 = time.Now()
		if _, err := dsf.WriteAt(page, 0); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))

		// the least durable release
		fl.file(b, id)
		got := make(chan time.Time, 1)
		go func() {
			resp, err := hc.Get(srv.URL + "/wait/" + id)
			if err != nil {
				b.Error(err)
				got <- time.Time{}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			got <- time.Now()
		}()
		<-fl.started
		t0 = time.Now()
		post(b, hc, srv.URL+"/decide/"+id, "")
		dur = append(dur, (<-got).Sub(t0))

		// the service
		rid, woke := fileAndWait(b, agent, started)
		t0 = time.Now()
		if _, err := op.Decide(ctx, rid, 1, "ok", ""); err != nil {
			b.Fatal(err)
		}
		gh = append(gh, (<-woke).Sub(t0))
		b.StartTimer()
	}
	floor := reportNamedPercentiles(b, "publish-", pub) + reportNamedPercentiles(b, "dsync-", ds)
	reportNamedPercentiles(b, "durable-", dur)
	reportNamedPercentiles(b, "gatehouse-", gh)
	b.ReportMetric(floor, "floor-p50-µs")
}

// floorServer is the least durable release: rows on SQLite, waiters by id.
type floorServer struct {
	db      *sql.DB
	started chan struct{}
	mu      sync.Mutex
	waiters map[string]chan []byte
	pubs    chan string
}

func newFloorServer(b *testing.B, path string) *floorServer {
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE r (id TEXT PRIMARY KEY, status TEXT NOT NULL, version INTEGER NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return &floorServer{db: db, started: make(chan struct{}, 1), waiters: map[string]chan []byte{}, pubs: make(chan string, 1)}
}

func (f *floorServer) file(b *testing.B, id string) {
	if _, err := f.db.Exec(`INSERT INTO r (id, status, version) VALUES (?, 'pending', 1)`, id); err != nil {
		b.Fatal(err)
	}
}

func (f *floorServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sub", func(w http.ResponseWriter, r *http.Request) {
		fl := w.(http.Flusher)
		w.WriteHeader(200)
		fl.Flush()
		for {
			select {
			case m := <-f.pubs:
				fmt.Fprintf(w, "%s\n", m)
				fl.Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /pub", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.pubs <- string(body)
		w.Write([]byte(`{"ok":true}`))
	})
	mux.HandleFunc("GET /wait/{id}", func(w http.ResponseWriter, r *http.Request) {
		ch := make(chan []byte, 1)
		f.mu.Lock()
		f.waiters[r.PathValue("id")] = ch
		f.mu.Unlock()
		f.started <- struct{}{}
		select {
		case ans := <-ch:
			w.Header().Set("Content-Type", "application/json")
			w.Write(ans)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /decide/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		tx, err := f.db.BeginTx(r.Context(), nil)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		if _, err := tx.Exec(`UPDATE r SET status = 'approved', version = version + 1 WHERE id = ? AND version = 1`, id); err != nil {
			tx.Rollback()
			http.Error(w, err.Error(), 500)
			return
		}
		if err := tx.Commit(); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		f.mu.Lock()
		ch := f.waiters[id]
		delete(f.waiters, id)
		f.mu.Unlock()
		if ch != nil {
			ch <- []byte(`{"id":"` + id + `","status":"approved","version":2}`)
		}
		w.Write([]byte(`{"ok":true}`))
	})
	return mux
}

type line struct {
	msg string
	at  time.Time
}

func subscribe(b *testing.B, hc *http.Client, url string) <-chan line {
	resp, err := hc.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { resp.Body.Close() })
	out := make(chan line, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			out <- line{strings.TrimSpace(sc.Text()), time.Now()}
		}
		close(out)
	}()
	return out
}

func post(b *testing.B, hc *http.Client, url, body string) {
	resp, err := hc.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("%s: %d", url, resp.StatusCode)
	}
}
