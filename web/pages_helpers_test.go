package web_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/PuerkitoBio/goquery"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// pageEnv is a running server on a real database with an operator and an agent.
type pageEnv struct {
	t        testing.TB
	store    *store.Store
	changes  *store.Changes
	srv      *web.Server
	url      string // where the server listens
	opToken  string
	agent    *client.Client
	operator *client.Client
}

// startPage serves the page through the ordinary test helper (the production
// assembly); prepare, when given, sets up the store first (rules).
func startPage(t testing.TB, dialect string, prepare ...func(*store.Store)) *pageEnv {
	t.Helper()
	st, changes := storetest.Store(t, dialect)
	for _, p := range prepare {
		p(st)
	}
	env := webtest.NewOn(t, st, changes, web.Config{})
	return newPageEnv(t, st, changes, env.Server, env.URL)
}

// startBarePage serves the page from a web server alone, with none of the
// optional stores (runtimes, devices, rules): for what the page leaves out.
func startBarePage(t testing.TB) *pageEnv {
	t.Helper()
	st, changes := storetest.Store(t, "sqlite")
	ts := httptest.NewUnstartedServer(nil)
	srv, err := web.New(web.Config{BaseURL: "http://" + ts.Listener.Addr().String()}, web.Deps{Store: st, Watcher: changes, Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler()
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return newPageEnv(t, st, changes, srv, ts.URL)
}

func newPageEnv(t testing.TB, st *store.Store, changes *store.Changes, srv *web.Server, url string) *pageEnv {
	t.Helper()
	ctx := context.Background()
	_, op, err := st.CreateToken(ctx, models.RoleOperator, "ann")
	if err != nil {
		t.Fatal(err)
	}
	_, ag, err := st.CreateToken(ctx, models.RoleAgent, "claude")
	if err != nil {
		t.Fatal(err)
	}
	return &pageEnv{t: t, store: st, changes: changes, srv: srv, url: url, opToken: op, agent: client.New(url, ag), operator: client.New(url, op)}
}

// file files a permission request as the agent.
func (e *pageEnv) file(title string, mods ...func(*api.NewRequest)) *api.Request {
	e.t.Helper()
	n := api.NewRequest{
		Kind: "permission", Title: title, Summary: "The agent wants to run a command", Risk: "high",
		Tool: "Bash", Command: "go test ./...", SourceRef: map[string]string{"session": "s-1", "turn": "3"},
		Options: []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
	}
	for _, m := range mods {
		m(&n)
	}
	r, err := e.agent.File(context.Background(), n, "")
	if err != nil {
		e.t.Fatalf("file: %v", err)
	}
	return r
}

// browser is a plain HTTP client with a cookie jar that does not follow redirects.
func (e *pageEnv) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login logs a browser in with the operator token and returns its CSRF token.
func (e *pageEnv) login(b *http.Client) string {
	e.t.Helper()
	res := e.postForm(b, "/login", url.Values{"token": {e.opToken}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("login: %d", res.StatusCode)
	}
	doc := e.get(b, "/", http.StatusOK)
	v, ok := doc.Find(`input[name="csrf"]`).Attr("value")
	if !ok || v == "" {
		e.t.Fatal("no CSRF token on the page")
	}
	return v
}

func (e *pageEnv) get(b *http.Client, path string, want int) *goquery.Document {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
	req.Header.Set("Accept", "text/html")
	res, err := b.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != want {
		e.t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return doc
}

func (e *pageEnv) postForm(b *http.Client, path string, form url.Values, headers map[string]string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := b.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { res.Body.Close() })
	return res
}

func parse(t testing.TB, res *http.Response) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
