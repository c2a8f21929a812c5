// Package webtest runs a real Gatehouse server for tests: a store on a real
// database, the web server on httptest, and helpers to call it.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

// Env is one running server and what it stands on: the production assembly
// (app.New), so tests run the forwarder, sweepers, push router, runtimes,
// grants and devices exactly as serve wires them.
type Env struct {
	T       testing.TB
	App     *app.App
	Store   *store.Store
	Changes *store.Changes
	Server  *web.Server
	HTTP    *http.Client // a client for the server
	URL     string       // where the server listens (127.0.0.1), whatever its public BaseURL

	stop func()
}

// New starts a server on a fresh database of the dialect ("sqlite" or
// "postgres"). cfg may be zero.
func New(t testing.TB, dialect string, cfg web.Config) *Env {
	t.Helper()
	return NewApp(t, app.Config{Database: storetest.URL(t, dialect), Web: cfg})
}

// NewOn starts a server on an existing store.
func NewOn(t testing.TB, st *store.Store, changes *store.Changes, cfg web.Config) *Env {
	t.Helper()
	return NewApp(t, app.Config{Store: st, Changes: changes, Web: cfg})
}

// NewApp starts the service with a full configuration (forwarding hooks,
// rules); Addr defaults to a free local port. It stops at the test's cleanup.
func NewApp(t testing.TB, cfg app.Config) *Env {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Web.FilingRate == 0 {
		// Tests file in tight loops; one that tests the allowance sets its own.
		cfg.Web.FilingRate = math.Inf(1)
	}
	a, err := app.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	hc := &http.Client{Transport: &http.Transport{}}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-ran; err != nil {
				t.Errorf("app run: %v", err)
			}
			hc.CloseIdleConnections()
			a.Close()
		})
	}
	t.Cleanup(stop)
	return &Env{T: t, App: a, Store: a.Store, Changes: a.Changes, Server: a.Server, HTTP: hc, URL: "http://" + a.Addr().String(), stop: stop}
}

// Stop shuts the service down as serve does at a signal (waits released first,
// then in-flight calls) and returns once it has stopped.
func (e *Env) Stop() { e.stop() }

// Token creates a token and returns its secret.
func (e *Env) Token(role, name string) string {
	e.T.Helper()
	_, secret, err := e.Store.CreateToken(context.Background(), role, name)
	if err != nil {
		e.T.Fatal(err)
	}
	return secret
}

// NamedToken creates a token with groups or the person it acts for and
// returns its secret.
func (e *Env) NamedToken(n store.NewToken) string {
	e.T.Helper()
	_, secret, err := e.Store.CreateNamedToken(context.Background(), n)
	if err != nil {
		e.T.Fatal(err)
	}
	return secret
}

// Do sends a call with a bearer token (none when token is "") and a body (a
// string or []byte is sent as is, anything else as JSON). It returns the
// status and the body.
func (e *Env) Do(method, path, token string, body any) (int, []byte) {
	e.T.Helper()
	return e.DoCtx(context.Background(), method, path, token, body)
}

// DoHeader is Do with one more header (set last, so it may replace the
// Content-Type Do sends).
func (e *Env) DoHeader(method, path, token string, body any, key, value string) (int, []byte) {
	e.T.Helper()
	return e.do(context.Background(), method, path, token, body, key, value)
}

// DoCtx is Do with a context.
func (e *Env) DoCtx(ctx context.Context, method, path, token string, body any) (int, []byte) {
	e.T.Helper()
	return e.do(ctx, method, path, token, body, "", "")
}

func (e *Env) do(ctx context.Context, method, path, token string, body any, key, value string) (int, []byte) {
	e.T.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewBufferString(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.URL+path, r)
	if err != nil {
		e.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set(key, value)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil && ctx.Err() == nil {
		e.T.Fatal(err)
	}
	return resp.StatusCode, data
}

// JSON decodes a body into a map, failing the test on bad JSON.
func JSON(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, body)
	}
	return m
}

// AllowDeny is the usual pair of options.
var AllowDeny = []map[string]string{
	{"id": "once", "label": "Allow once", "effect": "allow"},
	{"id": "deny", "label": "Deny", "effect": "deny"},
}

// File files a request as token and returns the record.
func (e *Env) File(token string, body map[string]any) map[string]any {
	e.T.Helper()
	if body == nil {
		body = map[string]any{}
	}
	if _, ok := body["title"]; !ok {
		body["title"] = "Run git push origin main"
	}
	if _, ok := body["options"]; !ok {
		body["options"] = AllowDeny
	}
	status, data := e.Do(http.MethodPost, "/v1/requests", token, body)
	if status != http.StatusCreated {
		e.T.Fatalf("file: %d %s", status, data)
	}
	return JSON(e.T, data)
}
