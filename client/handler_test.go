package client_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
)

// testKey is a fixed key so failures are reproducible.
func testKey(label string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(label))
	return ed25519.NewKeyFromSeed(seed[:])
}

type runtimeUnderTest struct {
	h    *client.Handler
	srv  *httptest.Server
	mu   sync.Mutex
	got  []api.Decision
	gone bool
}

// here is the id of the runtime under test.
const here = "rt_here"

func newRuntime(t *testing.T, keys map[string]ed25519.PublicKey, now func() time.Time) *runtimeUnderTest {
	rt := &runtimeUnderTest{}
	rt.h = &client.Handler{Keys: keys, RuntimeID: here, Now: now, OnDecision: func(_ context.Context, d api.Decision) error {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		if rt.gone {
			return client.ErrGone
		}
		rt.got = append(rt.got, d)
		return nil
	}}
	mux := http.NewServeMux()
	mux.Handle("POST "+api.DecidePath, rt.h)
	rt.srv = httptest.NewServer(mux)
	t.Cleanup(rt.srv.Close)
	return rt
}

func (rt *runtimeUnderTest) handed() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return len(rt.got)
}

// signed builds a forward to the runtime under test as the server sends it.
func signed(t *testing.T, url string, key ed25519.PrivateKey, keyID string, at time.Time, delivery string, d api.Decision) *http.Request {
	t.Helper()
	return signedFor(t, url, here, key, keyID, at, delivery, d)
}

// signedFor builds a forward to the runtime runtimeID.
func signedFor(t *testing.T, url, runtimeID string, key ed25519.PrivateKey, keyID string, at time.Time, delivery string, d api.Decision) *http.Request {
	t.Helper()
	body, _ := json.Marshal(d)
	req, err := http.NewRequest(http.MethodPost, url+api.DecidePath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	api.Sign(req.Header, key, keyID, http.MethodPost, api.DecidePath, at, delivery, runtimeID, body)
	return req
}

func send(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestHandler(t *testing.T) {
	server := testKey("server")
	keys := map[string]ed25519.PublicKey{"key_1": server.Public().(ed25519.PublicKey)}
	now := time.Unix(1_790_000_000, 0)
	rt := newRuntime(t, keys, func() time.Time { return now })
	allow := "once"
	d := func(id string, v int) api.Decision {
		return api.Decision{RequestID: id, Version: v, Decision: &allow}
	}

	t.Run("a signed decision is handed over", func(t *testing.T) {
		if code := send(t, signed(t, rt.srv.URL, server, "key_1", now, "dlv_1", d("req_a", 2))); code != http.StatusOK {
			t.Fatalf("status %d, want 200", code)
		}
		if rt.handed() != 1 {
			t.Fatalf("handed %d", rt.handed())
		}
	})

	t.Run("a forged signature is refused", func(t *testing.T) {
		forger := testKey("forger")
		if code := send(t, signed(t, rt.srv.URL, forger, "key_1", now, "dlv_2", d("req_b", 2))); code != http.StatusUnauthorized {
			t.Fatalf("forged: status %d, want 401", code)
		}
		req := signed(t, rt.srv.URL, server, "key_1", now, "dlv_3", d("req_b", 2))
		tampered, _ := json.Marshal(api.Decision{RequestID: "req_b", Version: 2})
		req.Body, req.ContentLength = httpBody(tampered), int64(len(tampered))
		if code := send(t, req); code != http.StatusUnauthorized {
			t.Fatalf("tampered body: status %d, want 401", code)
		}
		if code := send(t, signed(t, rt.srv.URL, server, "key_unknown", now, "dlv_4", d("req_b", 2))); code != http.StatusUnauthorized {
			t.Fatalf("unknown key: status %d, want 401", code)
		}
		unsigned, _ := http.NewRequest(http.MethodPost, rt.srv.URL+api.DecidePath, bytes.NewReader([]byte(`{"requestId":"req_b","version":2}`)))
		if code := send(t, unsigned); code != http.StatusUnauthorized {
			t.Fatalf("unsigned: status %d, want 401", code)
		}
		if rt.handed() != 1 {
			t.Fatalf("a refused call was handed over: %d", rt.handed())
		}
	})

	t.Run("a forward signed for another runtime is refused", func(t *testing.T) {
		before := rt.handed()
		if code := send(t, signedFor(t, rt.srv.URL, "rt_elsewhere", server, "key_1", now, "dlv_20", d("req_x", 2))); code != http.StatusUnauthorized {
			t.Fatalf("signed for another runtime: status %d, want 401", code)
		}
		relabelled := signedFor(t, rt.srv.URL, "rt_elsewhere", server, "key_1", now, "dlv_21", d("req_x", 2))
		relabelled.Header.Set(api.HeaderRuntime, here)
		if code := send(t, relabelled); code != http.StatusUnauthorized {
			t.Fatalf("runtime id header rewritten: status %d, want 401", code)
		}
		unnamed := signed(t, rt.srv.URL, server, "key_1", now, "dlv_22", d("req_x", 2))
		unnamed.Header.Del(api.HeaderRuntime)
		if code := send(t, unnamed); code != http.StatusUnauthorized {
			t.Fatalf("no runtime id: status %d, want 401", code)
		}
		if rt.handed() != before {
			t.Fatal("a forward for another runtime was handed over")
		}
	})

	t.Run("a replay is refused", func(t *testing.T) {
		first := signed(t, rt.srv.URL, server, "key_1", now, "dlv_5", d("req_c", 2))
		body, _ := json.Marshal(d("req_c", 2))
		if code := send(t, first); code != http.StatusOK {
			t.Fatalf("first: %d", code)
		}
		replay, _ := http.NewRequest(http.MethodPost, rt.srv.URL+api.DecidePath, bytes.NewReader(body))
		replay.Header = first.Header.Clone()
		if code := send(t, replay); code != http.StatusUnauthorized {
			t.Fatalf("replay: status %d, want 401", code)
		}
		old := signed(t, rt.srv.URL, server, "key_1", now.Add(-10*time.Minute), "dlv_6", d("req_d", 2))
		if code := send(t, old); code != http.StatusUnauthorized {
			t.Fatalf("outside the window: status %d, want 401", code)
		}
		if rt.handed() != 2 {
			t.Fatalf("handed %d, want 2", rt.handed())
		}
	})

	t.Run("a stale version is refused and a repeat is not handed twice", func(t *testing.T) {
		if code := send(t, signed(t, rt.srv.URL, server, "key_1", now, "dlv_7", d("req_e", 3))); code != http.StatusOK {
			t.Fatalf("v3: %d", code)
		}
		if code := send(t, signed(t, rt.srv.URL, server, "key_1", now, "dlv_8", d("req_e", 2))); code != http.StatusConflict {
			t.Fatalf("v2 after v3: status %d, want 409", code)
		}
		if code := send(t, signed(t, rt.srv.URL, server, "key_1", now, "dlv_9", d("req_e", 3))); code != http.StatusOK {
			t.Fatalf("v3 again (at-least-once): status %d, want 200", code)
		}
		if rt.handed() != 3 {
			t.Fatalf("handed %d, want 3: the repeat must not be handed over", rt.handed())
		}
	})

	t.Run("a lost live callback answers 409 and a later retry may succeed", func(t *testing.T) {
		rt.mu.Lock()
		rt.gone = true
		rt.mu.Unlock()
		if code := send(t, signed(t, rt.srv.URL, server, "key_1", now, "dlv_10", d("req_f", 2))); code != http.StatusConflict {
			t.Fatalf("gone: status %d, want 409", code)
		}
		rt.mu.Lock()
		rt.gone = false
		rt.mu.Unlock()
		if code := send(t, signed(t, rt.srv.URL, server, "key_1", now, "dlv_11", d("req_f", 2))); code != http.StatusOK {
			t.Fatalf("after the callback came back: status %d, want 200", code)
		}
	})
}

func TestHandlerForgets(t *testing.T) {
	server := testKey("server")
	keys := map[string]ed25519.PublicKey{"key_1": server.Public().(ed25519.PublicKey)}
	start := time.Unix(1_790_000_000, 0)
	var offset atomic.Int64
	clock := func() time.Time { return start.Add(time.Duration(offset.Load())) }
	rt := newRuntime(t, keys, clock)
	rt.h.Remember = time.Hour
	allow := "once"
	n := 0 // deliveries sent, for fresh delivery ids
	deliver := func(id string, v int) int {
		t.Helper()
		n++
		return send(t, signed(t, rt.srv.URL, server, "key_1", clock(), fmt.Sprintf("dlv_%d", n), api.Decision{RequestID: id, Version: v, Decision: &allow}))
	}
	for i := range 100 {
		if code := deliver(fmt.Sprintf("req_%d", i), 3); code != http.StatusOK {
			t.Fatalf("req_%d: %d", i, code)
		}
	}
	if seen, accepted := rt.h.Remembered(); seen != 100 || accepted != 100 {
		t.Fatalf("remembers %d deliveries and %d requests, want 100 each", seen, accepted)
	}

	t.Run("inside Remember a stale version is still refused", func(t *testing.T) {
		offset.Store(int64(50 * time.Minute))
		if code := deliver("req_0", 2); code != http.StatusConflict {
			t.Fatalf("v2 after v3, 50 minutes on: status %d, want 409", code)
		}
		if code := deliver("req_1", 3); code != http.StatusOK {
			t.Fatalf("a repeat: status %d, want 200", code)
		}
		if n := rt.handed(); n != 100 {
			t.Fatalf("handed %d, want 100: the repeat must not be handed over", n)
		}
	})

	t.Run("after Remember what it held is forgotten", func(t *testing.T) {
		offset.Store(int64(2 * time.Hour))
		if code := deliver("req_new", 2); code != http.StatusOK {
			t.Fatalf("req_new: %d", code)
		}
		if seen, accepted := rt.h.Remembered(); seen != 1 || accepted != 1 {
			t.Fatalf("remembers %d deliveries and %d requests, want only the last: memory must stay bounded", seen, accepted)
		}
	})
}

func httpBody(b []byte) *readCloser { return &readCloser{bytes.NewReader(b)} }

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
