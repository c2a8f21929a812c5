package web_test

import (
	"context"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

func TestPageLogin(t *testing.T) {
	t.Run("no session goes to the login form", func(t *testing.T) {
		e := startPage(t, "sqlite")
		req, _ := http.NewRequest(http.MethodGet, e.url+"/", nil)
		req.Header.Set("Accept", "text/html")
		res, err := e.browser().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
			t.Fatalf("GET / = %d %q", res.StatusCode, res.Header.Get("Location"))
		}
		doc := e.get(e.browser(), "/login", http.StatusOK)
		if doc.Find(`form[action="/login"] input[name="token"]`).Length() != 1 {
			t.Fatal("login form has no token field")
		}
	})

	t.Run("operator token opens a session with a safe cookie", func(t *testing.T) {
		e := startPage(t, "sqlite")
		b := e.browser()
		res := e.postForm(b, "/login", url.Values{"token": {e.opToken}}, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			t.Fatalf("login = %d %q", res.StatusCode, res.Header.Get("Location"))
		}
		var ck *http.Cookie
		for _, c := range res.Cookies() {
			if c.Name == "gatehouse_session" {
				ck = c
			}
		}
		if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure {
			t.Fatalf("cookie = %+v", ck)
		}
		doc := e.get(b, "/", http.StatusOK)
		if doc.Find(`[data-testid="logout-form"]`).Length() != 1 {
			t.Fatal("logged-in page offers no logout")
		}
	})

	t.Run("one-time link logs in once", func(t *testing.T) {
		e := startPage(t, "sqlite")
		// A link is for a first start, before any operator token exists.
		if _, err := e.store.RevokeToken(context.Background(), "ann"); err != nil {
			t.Fatal(err)
		}
		ticket, err := e.store.CreateLoginTicket(context.Background(), web.LoginTicketTTL)
		if err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		req, _ := http.NewRequest(http.MethodGet, e.url+"/login?token="+ticket, nil)
		res, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			t.Fatalf("link = %d", res.StatusCode)
		}
		e.get(b, "/", http.StatusOK)
		doc := e.get(e.browser(), "/login?token="+ticket, http.StatusUnauthorized)
		if doc.Find(`[data-testid="login-error"]`).Length() != 1 {
			t.Fatal("a spent link shows no error")
		}
	})

	t.Run("failed logins are rate limited per address, the right token never", func(t *testing.T) {
		e := startPage(t, "sqlite")
		b := e.browser()
		for i := 0; i < 10; i++ {
			if res := e.postForm(b, "/login", url.Values{"token": {fmt.Sprint("gh_wrong_", i)}}, nil); res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("attempt %d = %d", i, res.StatusCode)
			}
		}
		res := e.postForm(b, "/login", url.Values{"token": {"gh_wrong_again"}}, nil)
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
			t.Fatalf("after 10 failures = %d (Retry-After %q)", res.StatusCode, res.Header.Get("Retry-After"))
		}
		if got := parse(t, res).Find(`[data-testid="login-error"]`).Text(); !strings.Contains(got, "Too many failed logins") {
			t.Fatalf("error = %q", got)
		}
		if res := e.postForm(b, "/login", url.Values{"token": {e.opToken}}, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("the operator's token after 10 failures = %d, want 303", res.StatusCode)
		}
	})

	t.Run("logout ends the session", func(t *testing.T) {
		e := startPage(t, "sqlite")
		b := e.browser()
		csrf := e.login(b)
		if res := e.postForm(b, "/logout", url.Values{"csrf": {csrf}}, nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout = %d", res.StatusCode)
		}
		req, _ := http.NewRequest(http.MethodGet, e.url+"/", nil)
		res, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("after logout GET / = %d", res.StatusCode)
		}
	})
}

func TestPageInbox(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	a := e.file("Run the tests")
	q := e.file("Which branch?", func(n *api.NewRequest) { n.Kind, n.Risk, n.AllowAnswer = "question", "low", true })
	decided := e.file("Push it")
	if _, err := e.operator.Decide(context.Background(), decided.ID, decided.Version, "deny", ""); err != nil {
		t.Fatal(err)
	}

	t.Run("open by default, newest first, count in the title", func(t *testing.T) {
		doc := e.get(b, "/", http.StatusOK)
		var ids []string
		doc.Find(`[data-testid="card"]`).Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-request-id", "")) })
		if strings.Join(ids, ",") != q.ID+","+a.ID {
			t.Fatalf("cards = %v", ids)
		}
		if got := doc.Find("title").Text(); got != "(2) Gatehouse" {
			t.Fatalf("title = %q", got)
		}
		if doc.Find(`#req-`+q.ID+` textarea[name="answer"]`).Length() != 1 {
			t.Fatal("question card has no answer field")
		}
	})

	t.Run("filters", func(t *testing.T) {
		for path, want := range map[string]string{
			"/?status=resolved": decided.ID, "/?kind=question": q.ID, "/?risk=low": q.ID,
			"/?status=all&kind=permission&risk=high": decided.ID + "," + a.ID,
		} {
			var ids []string
			e.get(b, path, http.StatusOK).Find(`[data-testid="card"]`).Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-request-id", "")) })
			if strings.Join(ids, ",") != want {
				t.Errorf("%s = %v, want %s", path, ids, want)
			}
		}
		e.get(b, "/?status=bogus", http.StatusBadRequest)
	})

	t.Run("request page shows detail, source and audit trail", func(t *testing.T) {
		doc := e.get(b, "/requests/"+decided.ID, http.StatusOK)
		if got := doc.Find(`[data-testid="source-ref-session"]`).Text(); got != "s-1" {
			t.Errorf("source ref = %q", got)
		}
		var actions []string
		doc.Find(`[data-testid="audit-row"]`).Each(func(_ int, s *goquery.Selection) { actions = append(actions, s.AttrOr("data-action", "")) })
		if strings.Join(actions, ",") != "create,decide" {
			t.Errorf("audit = %v", actions)
		}
		if got := doc.Find(`[data-testid="card-outcome"]`).Text(); !strings.Contains(got, "Deny — denied by operator:ann via api") {
			t.Errorf("outcome = %q", got)
		}
		e.get(b, "/requests/req_nope", http.StatusNotFound)
	})

	t.Run("security headers", func(t *testing.T) {
		res, err := b.Get(e.url + "/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("CSP = %q", csp)
		}
		for _, h := range []string{"X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
			if res.Header.Get(h) == "" {
				t.Errorf("no %s", h)
			}
		}
	})

	t.Run("static files are cached by content hash", func(t *testing.T) {
		doc := e.get(b, "/", http.StatusOK)
		css := doc.Find(`link[rel="stylesheet"]`).AttrOr("href", "")
		res, err := b.Get(e.url + css)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
			t.Fatalf("%s = %d %q %q", css, res.StatusCode, res.Header.Get("Cache-Control"), res.Header.Get("Content-Type"))
		}
		req, _ := http.NewRequest(http.MethodGet, e.url+"/static/app.css", nil)
		req.Header.Set("If-None-Match", res.Header.Get("ETag"))
		res, err = b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotModified {
			t.Fatalf("revalidation = %d", res.StatusCode)
		}
		for _, p := range []string{"/static/vendor/htmx/htmx.min.js", "/static/vendor/htmx-ext-ws/ws.min.js", "/static/manifest.webmanifest", "/static/icons/icon-192.png"} {
			res, err := b.Get(e.url + p)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("%s = %d", p, res.StatusCode)
			}
		}
		res, err = b.Get(e.url + "/static/static.go")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("source served: %d", res.StatusCode)
		}
	})
}

func TestPageDecide(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := startPage(t, dialect)
		b := e.browser()
		csrf := e.login(b)
		form := func(r *api.Request, decision string, version int) url.Values {
			return url.Values{"csrf": {csrf}, "version": {strconv.Itoa(version)}, "decision": {decision}, "note": {"use the staging DB"}, "back": {"/"}}
		}

		t.Run("without JavaScript: decide and go back", func(t *testing.T) {
			r := e.file("Run the tests")
			res := e.postForm(b, "/requests/"+r.ID+"/decide", form(r, "once", r.Version), nil)
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
				t.Fatalf("decide = %d %q", res.StatusCode, res.Header.Get("Location"))
			}
			got, err := e.agent.Get(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Decision == nil || *got.Decision != "once" || got.Note == nil || *got.Note != "use the staging DB" || *got.DecidedVia != models.ViaPage {
				t.Fatalf("record = %+v", got)
			}
		})

		t.Run("no CSRF token changes nothing", func(t *testing.T) {
			r := e.file("Run the tests")
			f := form(r, "once", r.Version)
			f.Del("csrf")
			if res := e.postForm(b, "/requests/"+r.ID+"/decide", f, nil); res.StatusCode != http.StatusForbidden {
				t.Fatalf("decide without csrf = %d", res.StatusCode)
			}
			if got, _ := e.agent.Get(context.Background(), r.ID); got.Status != "open" {
				t.Fatalf("status = %s", got.Status)
			}
		})

		t.Run("a stale click shows what won", func(t *testing.T) {
			r := e.file("Run the tests")
			if _, err := e.operator.Decide(context.Background(), r.ID, r.Version, "deny", ""); err != nil {
				t.Fatal(err)
			}
			res := e.postForm(b, "/requests/"+r.ID+"/decide", form(r, "once", r.Version), nil)
			if res.StatusCode != http.StatusConflict {
				t.Fatalf("stale decide = %d", res.StatusCode)
			}
			doc := parse(t, res)
			n := doc.Find(`[data-testid="notice"]`)
			if n.AttrOr("data-kind", "") != "conflict" || !strings.Contains(n.Text(), "Decided elsewhere") || !strings.Contains(n.Text(), "Deny") {
				t.Fatalf("notice = %q", n.Text())
			}
			if doc.Find(`[data-testid="card"][data-status="resolved"]`).Length() != 1 {
				t.Fatal("page does not show the current state")
			}
		})

		t.Run("htmx: the notice is swapped in place", func(t *testing.T) {
			r := e.file("Run the tests")
			hx := map[string]string{"HX-Request": "true", "X-CSRF-Token": csrf}
			f := form(r, "once", r.Version)
			f.Del("csrf")
			res := e.postForm(b, "/requests/"+r.ID+"/decide", f, hx)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("decide = %d", res.StatusCode)
			}
			if n := parse(t, res).Find(`[data-testid="notice"]`); n.AttrOr("data-kind", "") != "ok" || !strings.Contains(n.Text(), "Allow once") {
				t.Fatalf("notice = %q", n.Text())
			}
			res = e.postForm(b, "/requests/"+r.ID+"/decide", form(r, "deny", r.Version), hx)
			if res.StatusCode != http.StatusConflict {
				t.Fatalf("second decide = %d", res.StatusCode)
			}
			if n := parse(t, res).Find(`[data-testid="notice"]`); n.AttrOr("data-kind", "") != "conflict" {
				t.Fatalf("notice = %q", n.Text())
			}
			bad := map[string]string{"HX-Request": "true", "X-CSRF-Token": "csrf_wrong"}
			r2 := e.file("Another")
			f2 := form(r2, "once", r2.Version)
			f2.Del("csrf")
			res = e.postForm(b, "/requests/"+r2.ID+"/decide", f2, bad)
			if res.StatusCode != http.StatusForbidden {
				t.Fatalf("bad csrf = %d", res.StatusCode)
			}
			if n := parse(t, res).Find(`[data-testid="notice"]`); n.AttrOr("data-kind", "") != "error" {
				t.Fatal("a refused htmx call shows no notice")
			}
		})

		t.Run("expired shows expired", func(t *testing.T) {
			r := e.file("Soon gone", func(n *api.NewRequest) { n.ExpiresIn = new(int64(1)) })
			// Expire it as the sweeper would, on a copy of the store whose clock is
			// past the expiry: the running sweepers read the server's clock.
			late := *e.store
			late.Now = func() time.Time { return r.ExpiresAt.Add(time.Second) }
			if n, _, err := late.Expire(context.Background()); err != nil || n != 1 {
				t.Fatalf("expire: %d %v", n, err)
			}
			res := e.postForm(b, "/requests/"+r.ID+"/decide", form(r, "once", r.Version), nil)
			if res.StatusCode != http.StatusGone {
				t.Fatalf("decide after expiry = %d", res.StatusCode)
			}
			if n := parse(t, res).Find(`[data-testid="notice"]`); n.AttrOr("data-kind", "") != "expired" {
				t.Fatalf("notice = %q", n.Text())
			}
		})

		t.Run("an answer and a dismissal", func(t *testing.T) {
			q := e.file("Which branch?", func(n *api.NewRequest) { n.Kind, n.AllowAnswer, n.Options = "question", true, nil })
			f := url.Values{"csrf": {csrf}, "version": {strconv.Itoa(q.Version)}, "decision": {""}, "answer": {"main"}}
			if res := e.postForm(b, "/requests/"+q.ID+"/decide", f, nil); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("answer = %d", res.StatusCode)
			}
			if got, _ := e.agent.Get(context.Background(), q.ID); got.Answer == nil || *got.Answer != "main" {
				t.Fatalf("answer = %v", got.Answer)
			}
			w := e.file("Waiting on CI", func(n *api.NewRequest) { n.Kind, n.Options = "waiting", nil })
			if res := e.postForm(b, "/requests/"+w.ID+"/dismiss", url.Values{"csrf": {csrf}}, nil); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("dismiss = %d", res.StatusCode)
			}
			if got, _ := e.agent.Get(context.Background(), w.ID); got.Status != "dismissed" {
				t.Fatalf("status = %s", got.Status)
			}
		})
	})
}

func TestPageCookieSecureOverHTTPS(t *testing.T) {
	st, changes := storetest.Store(t, "sqlite")
	srv, err := web.New(web.Config{BaseURL: "https://gatehouse.example"}, web.Deps{Store: st, Watcher: changes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	_, op, err := st.CreateToken(context.Background(), models.RoleOperator, "ann")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {op}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	res := rec.Result()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login = %d", res.StatusCode)
	}
	for _, c := range res.Cookies() {
		if c.Name == web.SessionCookie && (!c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode) {
			t.Fatalf("cookie = %+v", c)
		}
	}
	if res.Header.Get("Strict-Transport-Security") == "" {
		t.Fatal("no HSTS over https")
	}
}

func TestPageClicksAtOnce(t *testing.T) {
	e := startPage(t, "sqlite")
	laptop, phone := e.browser(), e.browser()
	csrfL, csrfP := e.login(laptop), e.login(phone)
	r := e.file("Run the tests")
	results := make(chan int, 2)
	click := func(b *http.Client, csrf, decision string) {
		f := url.Values{"csrf": {csrf}, "version": {strconv.Itoa(r.Version)}, "decision": {decision}}
		req, _ := http.NewRequest(http.MethodPost, e.url+"/requests/"+r.ID+"/decide", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		res, err := b.Do(req)
		if err != nil {
			results <- 0
			return
		}
		res.Body.Close()
		results <- res.StatusCode
	}
	go click(laptop, csrfL, "once")
	go click(phone, csrfP, "deny")
	a, b := testkit.Recv(t, results, "results"), testkit.Recv(t, results, "results")
	if !(a == http.StatusOK && b == http.StatusConflict) && !(a == http.StatusConflict && b == http.StatusOK) {
		t.Fatalf("statuses = %d, %d: want one 200 and one 409", a, b)
	}
	got, err := e.agent.Get(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*http.Client{laptop, phone} {
		c := e.get(b, "/requests/"+r.ID, http.StatusOK).Find("#req-" + r.ID)
		if c.AttrOr("data-status", "") != "resolved" || c.AttrOr("data-version", "") != strconv.Itoa(got.Version) {
			t.Fatalf("a browser shows %s v%s, the record is %s v%d", c.AttrOr("data-status", ""), c.AttrOr("data-version", ""), got.Status, got.Version)
		}
	}
}
