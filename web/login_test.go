package web_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

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
