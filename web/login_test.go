package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

func TestLoginAndCSRF(t *testing.T) {
	e := webtest.New(t, "sqlite", web.Config{})
	op, ag := e.Token(models.RoleOperator, "alice"), e.Token(models.RoleAgent, "a")
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(token string) *http.Response {
		resp, err := browser.PostForm(e.URL+"/login", url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	t.Run("an agent token cannot log in", func(t *testing.T) {
		if resp := login(ag); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%d", resp.StatusCode)
		}
	})
	var cookie *http.Cookie
	t.Run("an operator token logs in with a strict cookie", func(t *testing.T) {
		resp := login(op)
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("%d %v", resp.StatusCode, resp.Cookies())
		}
		cookie = resp.Cookies()[0]
		if !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
			t.Fatalf("cookie %+v", cookie)
		}
	})
	t.Run("logging in again with a live session works", func(t *testing.T) {
		if resp := login(op); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%d", resp.StatusCode)
		}
	})

	id := e.File(ag, nil)["id"].(string)
	decide := func(csrf string) int {
		req, _ := http.NewRequest("POST", e.URL+"/v1/requests/"+id+"/decide", strings.NewReader(`{"version":1,"decision":"once"}`))
		req.Header.Set("Content-Type", "application/json")
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	t.Run("a cookie call that changes state needs the CSRF token", func(t *testing.T) {
		if s := decide(""); s != http.StatusForbidden {
			t.Fatalf("without CSRF: %d", s)
		}
		if s := decide("csrf_wrong"); s != http.StatusForbidden {
			t.Fatalf("with a wrong CSRF: %d", s)
		}
		var sess models.Session
		u, _ := url.Parse(e.URL)
		c := jar.Cookies(u)[0]
		if err := e.Store.DB.Where("hash = ?", models.HashSecret(c.Value)).Take(&sess).Error; err != nil {
			t.Fatal(err)
		}
		if s := decide(sess.CSRF); s != http.StatusOK {
			t.Fatalf("with CSRF: %d", s)
		}
		r, _ := e.Store.GetRequest(context.Background(), id)
		if *r.DecidedVia != "page" || *r.DecidedBy != "operator:alice" {
			t.Fatalf("decided by %s via %s", *r.DecidedBy, *r.DecidedVia)
		}
	})
}

func TestSecureCookieOverHTTPS(t *testing.T) {
	e := webtest.New(t, "sqlite", web.Config{BaseURL: "https://inbox.example.com"})
	op := e.Token(models.RoleOperator, "alice")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(e.URL+"/login", url.Values{"token": {op}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 1 || !resp.Cookies()[0].Secure {
		t.Fatalf("cookie over an https base URL: %v", resp.Cookies())
	}
}

// TestLoginLimiterNeverLocksOutTheRightToken: the agent the page gates runs on
// the operator's machine, so it shares the operator's address. Its failed
// logins throttle its own wrong guesses, never the operator's right token.
func TestLoginLimiterNeverLocksOutTheRightToken(t *testing.T) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(t *testing.T, req *http.Request) (*http.Response, string) {
		t.Helper()
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	login := func(t *testing.T, e *webtest.Env, forwardedFor, token string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.URL+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if forwardedFor != "" {
			req.Header.Set("X-Forwarded-For", forwardedFor)
		}
		return send(t, req)
	}
	link := func(t *testing.T, e *webtest.Env, ticket string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.URL+"/login?token="+url.QueryEscape(ticket), nil)
		return send(t, req)
	}
	// throttle fails logins with a new wrong token each time until the
	// address is throttled, checking that it takes the whole burst.
	throttle := func(t *testing.T, fail func(i int) (*http.Response, string)) {
		t.Helper()
		for i := range 10 {
			if resp, body := fail(i); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failed login %d: %d %s, want 401", i+1, resp.StatusCode, body)
			}
		}
		resp, body := fail(10)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "too_many_logins") {
			t.Fatalf("the eleventh failed login: %d (Retry-After %q) %s, want 429 too_many_logins", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}

	t.Run("ten bad tokens from the operator's own address", func(t *testing.T) {
		e := webtest.New(t, "sqlite", web.Config{})
		op := e.Token(models.RoleOperator, "alice")
		throttle(t, func(i int) (*http.Response, string) { return login(t, e, "", fmt.Sprintf("gh_guess_%d", i)) })
		if resp, body := login(t, e, "", op); resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("the operator's token from the throttled address: %d %s, want 303 and a session", resp.StatusCode, body)
		}
		if st, body := e.Do("GET", "/v1/rules", op, nil); st != http.StatusOK {
			t.Fatalf("the operator's token as a bearer: %d %s", st, body)
		}
		if resp, _ := login(t, e, "", "gh_guess_after"); resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a wrong token after the operator logged in: %d, want 429 (a login does not clear the address)", resp.StatusCode)
		}
	})

	t.Run("a credential that keeps failing is throttled on its own", func(t *testing.T) {
		e := webtest.New(t, "sqlite", web.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		op := e.Token(models.RoleOperator, "alice")
		// One wrong token from eleven clients: no address is over its budget.
		throttle(t, func(i int) (*http.Response, string) { return login(t, e, fmt.Sprintf("203.0.113.%d", i+1), "gh_stale") })
		if resp, body := login(t, e, "203.0.113.99", "gh_other"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("another wrong token from a new client: %d %s, want 401", resp.StatusCode, body)
		}
		if resp, body := login(t, e, "203.0.113.1", op); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("the operator's token from a client that sent the stale one: %d %s, want 303", resp.StatusCode, body)
		}
	})

	t.Run("a one-time link still works from a throttled address", func(t *testing.T) {
		e := webtest.New(t, "sqlite", web.Config{})
		ticket, err := e.Store.CreateLoginTicket(context.Background(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		throttle(t, func(i int) (*http.Response, string) { return link(t, e, fmt.Sprintf("lt_guess_%d", i)) })
		if resp, body := link(t, e, ticket); resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
			t.Fatalf("the real link from the throttled address: %d %s, want 303 and a session", resp.StatusCode, body)
		}
	})

	t.Run("bad bearer tokens to the API lock out nothing", func(t *testing.T) {
		e := webtest.New(t, "sqlite", web.Config{})
		op := e.Token(models.RoleOperator, "alice")
		for i := range 20 {
			if st, body := e.Do("GET", "/v1/rules", fmt.Sprintf("gh_guess_%d", i), nil); st != http.StatusUnauthorized {
				t.Fatalf("bad bearer %d: %d %s, want 401", i+1, st, body)
			}
		}
		if st, body := e.Do("GET", "/v1/rules", op, nil); st != http.StatusOK {
			t.Fatalf("the operator's bearer token: %d %s", st, body)
		}
		if resp, body := login(t, e, "", op); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("the operator's login: %d %s, want 303", resp.StatusCode, body)
		}
	})
}
