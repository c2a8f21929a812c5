package client_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
)

// restartable is a runtime whose Handler keeps its replay state in a file; a
// restart is a new Handler and server on the same file.
type restartable struct {
	path   string
	keys   map[string]ed25519.PublicKey
	now    func() time.Time
	handed atomic.Int32
}

func (r *restartable) start(t *testing.T) *httptest.Server {
	t.Helper()
	h := &client.Handler{Keys: r.keys, RuntimeID: here, Now: r.now, Replay: &client.ReplayFile{Path: r.path},
		OnDecision: func(context.Context, api.Decision) error { r.handed.Add(1); return nil }}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestReplayFile(t *testing.T) {
	key := testKey("server")
	keys := map[string]ed25519.PublicKey{"k1": key.Public().(ed25519.PublicKey)}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var offset atomic.Int64
	now := func() time.Time { return at.Add(time.Duration(offset.Load())) }
	once := "once"
	d := func(id string, v int) api.Decision { return api.Decision{RequestID: id, Version: v, Decision: &once} }

	t.Run("a forward captured before a restart is refused after it", func(t *testing.T) {
		rt := &restartable{path: filepath.Join(t.TempDir(), "replay.json"), keys: keys, now: now}
		first := rt.start(t)
		if code := send(t, signed(t, first.URL, key, "k1", at, "dlv_1", d("req_1", 2))); code != 200 {
			t.Fatalf("first delivery: %d", code)
		}
		first.Close() // the runtime restarts
		offset.Store(int64(time.Minute))
		second := rt.start(t)
		if code := send(t, signed(t, second.URL, key, "k1", at, "dlv_1", d("req_1", 2))); code != http.StatusUnauthorized {
			t.Fatalf("replay after restart: %d, want 401", code)
		}
		// A new delivery of the same version (the server's retry) is a duplicate, not handed over again.
		if code := send(t, signed(t, second.URL, key, "k1", now(), "dlv_2", d("req_1", 2))); code != 200 {
			t.Fatalf("retry after restart: %d", code)
		}
		if code := send(t, signed(t, second.URL, key, "k1", now(), "dlv_3", d("req_1", 1))); code != http.StatusConflict {
			t.Fatalf("older version after restart: %d, want 409", code)
		}
		if n := rt.handed.Load(); n != 1 {
			t.Fatalf("handed over %d times, want once", n)
		}
	})

	t.Run("without a store a restart forgets (the reason for one)", func(t *testing.T) {
		rt := newRuntime(t, keys, now)
		if code := send(t, signed(t, rt.srv.URL, key, "k1", now(), "dlv_m", d("req_m", 2))); code != 200 {
			t.Fatalf("first: %d", code)
		}
		again := newRuntime(t, keys, now)
		if code := send(t, signed(t, again.srv.URL, key, "k1", now(), "dlv_m", d("req_m", 2))); code != 200 {
			t.Fatalf("in-memory replay after restart: %d (accepted, as documented)", code)
		}
	})

	t.Run("expired entries are dropped and the file is bounded", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "replay.json")
		f := &client.ReplayFile{Path: path, MaxEntries: 3}
		st := client.ReplayState{Deliveries: map[string]time.Time{}, Accepted: map[string]client.AcceptedUntil{}}
		for i, id := range []string{"a", "b", "c", "d", "e"} {
			st.Deliveries[id] = at.Add(time.Duration(i) * time.Minute)
		}
		if err := f.Save(st); err != nil {
			t.Fatal(err)
		}
		got, err := f.Load()
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Deliveries) != 3 || !got.Deliveries["e"].Equal(at.Add(4*time.Minute)) {
			t.Fatalf("kept %v; want the 3 that expire last", got.Deliveries)
		}
		// A handler on an old file forgets what expired and saves it smaller.
		old := client.ReplayState{Deliveries: map[string]time.Time{"stale": at.Add(-time.Hour)},
			Accepted: map[string]client.AcceptedUntil{"req_old": {Version: 2, Until: at.Add(-time.Hour)}}}
		if err := f.Save(old); err != nil {
			t.Fatal(err)
		}
		rt := &restartable{path: path, keys: keys, now: now}
		srv := rt.start(t)
		if code := send(t, signed(t, srv.URL, key, "k1", now(), "dlv_new", d("req_old", 1))); code != 200 {
			t.Fatalf("version 1 of a forgotten request: %d", code)
		}
		got, _ = f.Load()
		if _, ok := got.Deliveries["stale"]; ok || len(got.Deliveries) != 1 || got.Accepted["req_old"].Version != 1 {
			t.Fatalf("state after a delivery = %+v", got)
		}
		entries, _ := os.ReadDir(filepath.Dir(path))
		if len(entries) != 1 {
			t.Fatalf("%d files beside the state; a temporary file was left", len(entries))
		}
	})

	t.Run("an unreadable file refuses deliveries, it does not forget", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "replay.json")
		if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
		rt := &restartable{path: path, keys: keys, now: now}
		srv := rt.start(t)
		resp, err := http.DefaultClient.Do(signed(t, srv.URL, key, "k1", now(), "dlv_x", d("req_x", 2)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 500 || !strings.Contains(string(b), "replay state") || rt.handed.Load() != 0 {
			t.Fatalf("%d %s; want 500 naming the replay state, nothing handed over", resp.StatusCode, b)
		}
	})
}
