package park_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/park"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"go.uber.org/goleak"
)

// TestMain also checks that a closed Parker leaves no goroutine behind (the
// epoll loop, the release workers, the hangup watches).
func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Summarized(m)) }

// These tests park waits alone, without the web server: a plain net/http
// handler that parks every wait, the real change fan-out (store.Changes),
// and records kept as plain values. The whole route (authorisation, caps,
// the answer's shape) is web's tests' business.

// env is one Parker behind one test server.
type env struct {
	pk       *park.Parker
	changes  *store.Changes
	watches  atomic.Int64 // live watches on the fan-out
	addr     string
	started  chan struct{}
	released chan struct{}

	mu      sync.Mutex
	records map[string]models.Request
}

func newEnv(t *testing.T) *env {
	e := &env{changes: store.NewChanges(), started: make(chan struct{}, 64), released: make(chan struct{}, 64), records: map[string]models.Request{}}
	e.pk = park.New(park.Config{
		Watcher:  e,
		Read:     e.read,
		Answer:   answer,
		Woken:    func(r *models.Request) []byte { return answer(r, false) },
		Released: func(*models.Request, bool) {},
		Started:  func() { e.started <- struct{}{} },
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /wait/{id}", e.serveWait)
	srv := httptest.NewServer(mux)
	e.addr = srv.Listener.Addr().String()
	t.Cleanup(func() {
		e.pk.Close() // first: the parked connections are no longer net/http's
		srv.Close()
	})
	return e
}

// WatchFunc is the fan-out's, counting the watches still live.
func (e *env) WatchFunc(id string, f func(models.Change)) func() bool {
	e.watches.Add(1)
	stop := e.changes.WatchFunc(id, func(ch models.Change) {
		e.watches.Add(-1)
		f(ch)
	})
	return func() bool {
		ok := stop()
		if ok {
			e.watches.Add(-1)
		}
		return ok
	}
}

func (e *env) read(_ context.Context, id string) (*models.Request, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.records[id]
	if !ok {
		return nil, fmt.Errorf("no request %s", id)
	}
	return &r, nil
}

// file keeps an open request at version 1.
func (e *env) file(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records[id] = models.Request{ID: id, Status: models.StatusOpen, Version: 1}
}

// commit stores the next version of id and announces it, carrying the
// record, as the store does.
func (e *env) commit(id, status string) {
	e.mu.Lock()
	r := e.records[id]
	r.Version++
	r.Status = status
	e.records[id] = r
	e.mu.Unlock()
	e.changes.Announce(models.Change{RequestID: id, Version: r.Version, Status: status, Record: &r})
}

// serveWait parks every wait. With ?early=1 a change is committed between
// the read and the park, the moment the watch-first order is for.
func (e *env) serveWait(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	pw := e.pk.Watch(id)
	first, err := e.read(r.Context(), id)
	if err != nil {
		pw.Cancel()
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	timeout, err := time.ParseDuration(r.URL.Query().Get("timeout"))
	if err != nil {
		pw.Cancel()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Query().Get("early") != "" {
		e.commit(id, models.StatusResolved)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	release := func() { e.released <- struct{}{} }
	if !pw.Park(w, first, timeout, park.Slot{Free: func() {}, Release: release}) {
		release()
		http.Error(w, "not parked", http.StatusInternalServerError)
	}
}

func answer(r *models.Request, timedOut bool) []byte {
	b, err := json.Marshal(map[string]any{"id": r.ID, "version": r.Version, "status": r.Status, "timed_out": timedOut})
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// wait sends a wait for id on a connection of its own.
func (e *env) wait(t *testing.T, id, query string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", e.addr, testkit.CapWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /wait/%s?%s HTTP/1.1\r\nHost: %s\r\n\r\n", id, query, e.addr)
	return c
}

// readAnswer reads one answer from c and expects the connection closed after
// it.
func readAnswer(t *testing.T, c net.Conn) (*http.Response, map[string]any) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(testkit.CapWait))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read the wait's answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the answer: %q, %v (want the connection closed)", rest, err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return resp, m
}

func TestPark(t *testing.T) {
	t.Run("a change answers every parked wait on the request from its record, over one watch", func(t *testing.T) {
		e := newEnv(t)
		e.file("r1")
		cs := make([]net.Conn, 40) // more than are answered inline: the workers answer the rest
		for i := range cs {
			cs[i] = e.wait(t, "r1", "timeout=60s")
		}
		for range cs {
			testkit.Recv(t, e.started, "the waits to park")
		}
		if n, w := e.pk.Count(), e.watches.Load(); n != len(cs) || w != 1 {
			t.Fatalf("%d parked, %d watches; want %d on 1", n, w, len(cs))
		}
		e.commit("r1", models.StatusResolved)
		for _, c := range cs {
			resp, got := readAnswer(t, c)
			if resp.StatusCode != http.StatusOK || !resp.Close || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("%d %v", resp.StatusCode, resp.Header)
			}
			if got["version"] != 2.0 || got["status"] != models.StatusResolved || got["timed_out"] != false {
				t.Fatalf("%v", got)
			}
		}
		for range cs {
			testkit.Recv(t, e.released, "the waits to let go of their slots")
		}
		if n, w := e.pk.Count(), e.watches.Load(); n != 0 || w != 0 {
			t.Fatalf("%d parked, %d watches after the answers", n, w)
		}
	})

	t.Run("a change between the read and the park is not missed", func(t *testing.T) {
		e := newEnv(t)
		e.file("r1")
		c := e.wait(t, "r1", "timeout=60s&early=1")
		if _, got := readAnswer(t, c); got["version"] != 2.0 || got["timed_out"] != false {
			t.Fatalf("%v", got)
		}
		testkit.Recv(t, e.released, "the wait to let go of its slot")
	})

	t.Run("the timeout answers with the current record and timed_out", func(t *testing.T) {
		e := newEnv(t)
		e.file("r1")
		c := e.wait(t, "r1", "timeout=20ms")
		if _, got := readAnswer(t, c); got["version"] != 1.0 || got["status"] != models.StatusOpen || got["timed_out"] != true {
			t.Fatalf("%v", got)
		}
		testkit.Recv(t, e.released, "the wait to let go of its slot")
		if w := e.watches.Load(); w != 0 {
			t.Fatalf("%d watches left", w)
		}
	})

	t.Run("a client that hangs up ends its wait", func(t *testing.T) {
		e := newEnv(t)
		e.file("r1")
		c := e.wait(t, "r1", "timeout=300s")
		testkit.Recv(t, e.started, "the wait to park")
		c.Close()
		testkit.Recv(t, e.released, "the wait to let go of its slot")
		if n, w := e.pk.Count(), e.watches.Load(); n != 0 || w != 0 {
			t.Fatalf("%d parked, %d watches after the hangup", n, w)
		}
	})

	t.Run("Close answers every parked wait, and a wait parked after it at once", func(t *testing.T) {
		e := newEnv(t)
		e.file("r1")
		e.file("r2")
		c1, c2 := e.wait(t, "r1", "timeout=300s"), e.wait(t, "r2", "timeout=300s")
		testkit.Recv(t, e.started, "the first wait to park")
		testkit.Recv(t, e.started, "the second wait to park")
		e.pk.Close()
		for _, c := range []net.Conn{c1, c2} {
			if _, got := readAnswer(t, c); got["version"] != 1.0 || got["timed_out"] != true {
				t.Fatalf("%v", got)
			}
		}
		late := e.wait(t, "r1", "timeout=300s")
		if _, got := readAnswer(t, late); got["timed_out"] != true {
			t.Fatalf("%v", got)
		}
		for range 3 {
			testkit.Recv(t, e.released, "the waits to let go of their slots")
		}
	})

	t.Run("a writer that cannot be handed over is not parked and leaves no watch", func(t *testing.T) {
		e := newEnv(t)
		e.file("r1")
		pw := e.pk.Watch("r1")
		first, _ := e.read(t.Context(), "r1")
		slot := park.Slot{Free: func() { t.Error("a wait that was not parked gave its slot back") }, Release: func() { t.Error("a wait that was not parked released its slot") }}
		if pw.Park(httptest.NewRecorder(), first, time.Minute, slot) {
			t.Fatal("parked on a recorder")
		}
		if n, w := e.pk.Count(), e.watches.Load(); n != 0 || w != 0 {
			t.Fatalf("%d parked, %d watches", n, w)
		}
	})
}

func TestCanPark(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want bool
	}{
		{"plain HTTP/1.1 without a body", func() *http.Request { return httptest.NewRequest("GET", "/wait/r1", nil) }, true},
		{"a body", func() *http.Request { return httptest.NewRequest("GET", "/wait/r1", strings.NewReader("x")) }, false},
		{"a chunked body", func() *http.Request {
			r := httptest.NewRequest("GET", "/wait/r1", nil)
			r.TransferEncoding = []string{"chunked"}
			return r
		}, false},
		{"HTTP/2", func() *http.Request {
			r := httptest.NewRequest("GET", "/wait/r1", nil)
			r.ProtoMajor, r.ProtoMinor = 2, 0
			return r
		}, false},
		{"TLS", func() *http.Request { return httptest.NewRequest("GET", "https://x/wait/r1", nil) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := park.CanPark(tc.req()); got != tc.want {
				t.Fatalf("CanPark = %v, want %v", got, tc.want)
			}
		})
	}
}
