// Command floorserver is the least a server can do and still release a waiter
// only after its decision is durable: the part of Gatehouse's API the
// side-by-side run with ntfy calls (file, wait, decide, and `token create` to
// start), where a decide is one conditional UPDATE and its COMMIT on SQLite in
// WAL mode with synchronous=FULL, the settings Gatehouse runs with, and the
// waiting long-poll is answered once that COMMIT returns. No authentication,
// no audit entry, no checks: put in Gatehouse's place in that run, it measures
// what committing before releasing costs on the machine, apart from anything
// else Gatehouse does. With --no-commit a decide writes nothing at all: what
// is left is the long-poll's way over HTTP.
//
//	go build -o /tmp/floorserver ./bench/floorserver
//	… run . -gatehouse /tmp/floorserver -ntfy … -only wake [-gatehouse-args --no-commit]
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "token" {
		fmt.Println("floor") // no authentication: any token will do
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: floorserver serve --addr HOST:PORT --database sqlite:PATH | floorserver token create …")
		os.Exit(2)
	}
	addr, path := flagValue("--addr"), strings.TrimPrefix(flagValue("--database"), "sqlite:")
	if addr == "" || path == "" {
		fmt.Fprintln(os.Stderr, "floorserver serve: --addr and --database sqlite:PATH are required")
		os.Exit(2)
	}
	s, err := open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floorserver:", err)
		os.Exit(1)
	}
	s.noCommit = hasFlag("--no-commit")
	srv := &http.Server{Addr: addr, Handler: s.routes()}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		s.close()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "floorserver:", err)
		os.Exit(1)
	}
}

// flagValue is the value after name in the arguments ("--name V" or
// "--name=V"); every other flag the run passes is ignored.
func flagValue(name string) string {
	for i, a := range os.Args {
		if a == name && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// hasFlag reports whether the flag name was given.
func hasFlag(name string) bool {
	for _, a := range os.Args {
		if a == name {
			return true
		}
	}
	return false
}

// server holds the database and the waits parked on each request.
type server struct {
	db       *sql.DB
	noCommit bool // a decide releases its waits without writing

	mu      sync.Mutex
	next    int64
	decided map[string]chan struct{} // closed once decided: after the COMMIT, or at once with --no-commit
	closing chan struct{}
}

// open opens path as Gatehouse opens its SQLite file: WAL, synchronous=FULL,
// one writer connection whose transactions begin IMMEDIATE.
func open(path string) (*server, error) {
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS requests (id TEXT PRIMARY KEY, status TEXT NOT NULL, version INTEGER NOT NULL)"); err != nil {
		return nil, err
	}
	return &server{db: db, decided: map[string]chan struct{}{}, closing: make(chan struct{})}, nil
}

func (s *server) close() { close(s.closing) }

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /v1/requests", s.file)
	mux.HandleFunc("GET /v1/requests/{id}/wait", s.wait)
	mux.HandleFunc("POST /v1/requests/{id}/decide", s.decide)
	return mux
}

func (s *server) file(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.next++
	id := "r" + strconv.FormatInt(s.next, 10)
	s.decided[id] = make(chan struct{})
	s.mu.Unlock()
	if _, err := s.db.Exec("INSERT INTO requests (id, status, version) VALUES (?, 'open', 1)", id); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	answer(w, http.StatusCreated, map[string]any{"id": id, "status": "open", "version": 1})
}

// wait answers once the request's decision has committed, or after
// ?timeout= seconds (default 60) with timed_out: true.
func (s *server) wait(w http.ResponseWriter, r *http.Request) {
	ch := s.channel(r.PathValue("id"))
	if ch == nil {
		http.NotFound(w, r)
		return
	}
	timeout := 60 * time.Second
	if n, err := strconv.Atoi(r.URL.Query().Get("timeout")); err == nil && n > 0 {
		timeout = time.Duration(n) * time.Second
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	timedOut := false
	select {
	case <-ch:
	case <-t.C:
		timedOut = true
	case <-r.Context().Done():
		return
	case <-s.closing:
		timedOut = true
	}
	w.Header().Set("Connection", "close") // as Gatehouse answers a parked wait
	answer(w, http.StatusOK, map[string]any{"request": map[string]any{"id": r.PathValue("id")}, "timed_out": timedOut})
}

// decide commits the decision, then releases the waits.
func (s *server) decide(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in struct {
		Version int `json:"version"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ch := s.channel(id)
	if ch == nil {
		http.NotFound(w, r)
		return
	}
	if s.noCommit {
		s.release(w, id, ch, in.Version)
		return
	}
	tx, err := s.db.Begin()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	res, err := tx.Exec("UPDATE requests SET status = 'resolved', version = version + 1 WHERE id = ? AND version = ? AND status = 'open'", id, in.Version)
	if err == nil {
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		answer(w, http.StatusConflict, map[string]any{"error": "conflict"})
		return
	}
	s.release(w, id, ch, in.Version)
}

// release answers the request's waits, then the decider. Without a commit
// nothing checks the version, so a second decide is refused here.
func (s *server) release(w http.ResponseWriter, id string, ch chan struct{}, version int) {
	s.mu.Lock()
	select {
	case <-ch:
		s.mu.Unlock()
		answer(w, http.StatusConflict, map[string]any{"error": "conflict"})
		return
	default:
		close(ch)
	}
	s.mu.Unlock()
	answer(w, http.StatusOK, map[string]any{"id": id, "status": "resolved", "version": version + 1})
}

func (s *server) channel(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.decided[id]
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
