package gate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/gate"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

// guard bounds every blocking wait in these tests: a deadline for a hang, not
// a speed assertion.
const guard = 30 * time.Second

// The upstream's credential, which only the gate holds.
const upstreamSecret = "ghp_upstream-secret-only-the-gate-holds"

// hit is one request the upstream received.
type hit struct {
	Method, URI string
	Body        string
	Header      http.Header
}

// upstream is a real TLS server standing in for the API behind the gate.
type upstream struct {
	srv     *httptest.Server
	mu      sync.Mutex
	hits    []hit
	handler http.HandlerFunc // answers after the hit is recorded; nil: 200 {"ok":true}
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.hits = append(u.hits, hit{Method: r.Method, URI: r.RequestURI, Body: string(b), Header: r.Header.Clone()})
		h := u.handler
		u.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// Hits is a copy of what reached the upstream so far.
func (u *upstream) Hits() []hit {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]hit(nil), u.hits...)
}

// gatehouse is a real Gatehouse server with the pending-grant routes wired.
type gatehouse struct {
	srv      *httptest.Server
	store    *store.Store
	runtime  string // the gate's token
	operator string
	agent    string        // the agent's own token: it is on the same machine
	parked   chan struct{} // one value each time a long-poll starts to wait
}

func newGatehouse(t *testing.T, dialect string) *gatehouse {
	t.Helper()
	return newGatehouseWith(t, dialect, web.Config{})
}

// newGatehouseWith is newGatehouse with a configuration (limits); its base
// URL and wait hook are set here.
func newGatehouseWith(t *testing.T, dialect string, cfg web.Config) *gatehouse {
	t.Helper()
	st, changes := storetest.Store(t, dialect)
	g := &gatehouse{store: st, srv: httptest.NewUnstartedServer(nil), parked: make(chan struct{}, 1024)}
	cfg.BaseURL = "http://" + g.srv.Listener.Addr().String()
	cfg.OnWaitStart = func() {
		select {
		case g.parked <- struct{}{}:
		default:
		}
	}
	s, err := web.New(cfg, web.Deps{Store: st, Watcher: changes, DB: st.DB, Grants: st})
	if err != nil {
		t.Fatal(err)
	}
	g.srv.Config.Handler = s.Handler()
	g.srv.Start()
	t.Cleanup(func() { s.Close(); g.srv.Close() })
	for role, dst := range map[string]*string{"runtime": &g.runtime, "operator": &g.operator, "agent": &g.agent} {
		_, secret, err := st.CreateToken(context.Background(), role, role+"-1")
		if err != nil {
			t.Fatal(err)
		}
		*dst = secret
	}
	return g
}

// decide decides a grant's request as the operator, through the API.
func (g *gatehouse) decide(t *testing.T, requestID, decision string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	op := client.New(g.srv.URL, g.operator)
	r, err := op.Get(ctx, requestID)
	if err != nil {
		t.Fatalf("get %s: %v", requestID, err)
	}
	if _, err := op.Decide(ctx, requestID, r.Version, decision, ""); err != nil {
		t.Fatalf("decide %s %s: %v", requestID, decision, err)
	}
}

// env is a gate in front of a TLS upstream, asking a real Gatehouse.
type env struct {
	up   *upstream
	gh   *gatehouse
	gate *httptest.Server
	logs *syncBuffer
	http *http.Client
}

// rulesYAML is the rules most tests run with.
const rulesYAML = `
rules:
  - name: reads
    match: {method: GET}
    action: allow
  - name: no-deletes
    match: {method: DELETE, path: '^/repos/[^/]+/[^/]+$'}
    action: deny
  - name: merges
    match: {method: PUT, path: '^/repos/[^/]+/[^/]+/pulls/[0-9]+/merge$'}
    action: ask
  - name: comments
    match: {method: POST, path: '/comments$'}
    action: allow
`

// gateConfig is what a test option may change.
type gateConfig = gate.Config

type option func(*gate.Config)

func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	return newEnvOn(t, "sqlite", opts...)
}

// newEnvOn is newEnv with Gatehouse on the dialect ("sqlite" or "postgres").
func newEnvOn(t *testing.T, dialect string, opts ...option) *env {
	t.Helper()
	e := &env{up: newUpstream(t), gh: newGatehouse(t, dialect)}
	return e.start(t, e.up, nil, opts...)
}

// newEnvLimited is newEnv with Gatehouse's limits set by cfg.
func newEnvLimited(t *testing.T, cfg web.Config) *env {
	t.Helper()
	e := &env{up: newUpstream(t), gh: newGatehouseWith(t, "sqlite", cfg)}
	return e.start(t, e.up, nil)
}

// beside is another gate on the same Gatehouse (same runtime token, same
// sandbox) in front of up, its URL changed by rewrite when given.
func (e *env) beside(t *testing.T, up *upstream, rewrite func(string) string) *env {
	t.Helper()
	e2 := &env{up: up, gh: e.gh}
	return e2.start(t, up, rewrite)
}

func (e *env) start(t *testing.T, up *upstream, rewrite func(string) string, opts ...option) *env {
	t.Helper()
	e.logs = &syncBuffer{}
	rules, err := gate.ParseRules("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	raw := up.srv.URL
	if rewrite != nil {
		raw = rewrite(raw)
	}
	u, _ := url.Parse(raw)
	cfg := gate.Config{
		Upstream: u, Sandbox: "sb-1", Rules: rules, Grants: client.New(e.gh.srv.URL, e.gh.runtime),
		Credentials: []gate.Header{{Name: "Authorization", Value: "Bearer " + upstreamSecret}},
		Transport:   up.srv.Client().Transport,
		Logger:      slog.New(slog.NewJSONHandler(e.logs, nil)),
	}
	for _, o := range opts {
		o(&cfg)
	}
	g, err := gate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.gate = httptest.NewServer(g)
	t.Cleanup(e.gate.Close)
	e.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	t.Cleanup(e.http.CloseIdleConnections)
	return e
}

// answer is one response the agent got.
type answer struct {
	Status int
	Body   []byte
	Header http.Header
}

// JSON decodes the body into a map.
func (a answer) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.Body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v: %s", a.Status, err, a.Body)
	}
	return m
}

// send is the agent's call through the gate, with its own Gatehouse token as
// its Authorization (what an agent that tries it would send).
func (e *env) send(t *testing.T, method, target, body string, header ...string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.gate.URL+target, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.gh.agent)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{Status: resp.StatusCode, Body: b, Header: resp.Header}
}

// sendChunked sends a body without a Content-Length, so the gate learns its
// size only by reading it.
func (e *env) sendChunked(t *testing.T, method, target, body string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.gate.URL+target, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{Status: resp.StatusCode, Body: b, Header: resp.Header}
}

// ask sends a request the rules ask about and returns the pending id and the
// request id Gatehouse filed for it.
func (e *env) ask(t *testing.T, method, target, body string) (pendingID, requestID string) {
	t.Helper()
	a := e.send(t, method, target, body)
	m := a.JSON(t)
	if a.Status != http.StatusForbidden || m["error"] != "approval_pending" {
		t.Fatalf("%s %s: want 403 approval_pending, got %d %s", method, target, a.Status, a.Body)
	}
	pendingID, _ = m["pending_id"].(string)
	return pendingID, e.grant(t, pendingID).RequestID
}

// grant reads a grant as the gate's runtime token sees it.
func (e *env) grant(t *testing.T, pendingID string) *api.PendingWait {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	st, err := client.New(e.gh.srv.URL, e.gh.runtime).GetPending(ctx, pendingID)
	if err != nil {
		t.Fatalf("grant %s: %v", pendingID, err)
	}
	return st
}

// outcomes are the gate's log records with the outcome.
func (e *env) outcomes(t *testing.T, what string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(e.logs.Bytes(), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m["outcome"] == what {
			out = append(out, m)
		}
	}
	return out
}

// syncBuffer is a log destination several goroutines write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// call is a raw call to Gatehouse with a bearer token.
func (g *gatehouse) call(t *testing.T, method, path, token, body string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, g.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{Status: resp.StatusCode, Body: b, Header: resp.Header}
}

// upstreamPort is the upstream's port, as grants name it.
func (e *env) upstreamPort(t *testing.T) string {
	t.Helper()
	u, _ := url.Parse(e.up.srv.URL)
	return u.Port()
}

// sha is the hex SHA-256 of s.
func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
