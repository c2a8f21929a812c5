package web_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// loginFrom posts the login form as a client behind a proxy that names it in
// X-Forwarded-For.
func loginFrom(t *testing.T, e *webtest.Env, forwardedFor, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", e.URL+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", forwardedFor)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// lockOut fails logins from one client, each with another wrong token, until
// the limiter refuses it.
func lockOut(t *testing.T, e *webtest.Env, forwardedFor string) {
	t.Helper()
	for i := range 50 {
		switch st := loginFrom(t, e, forwardedFor, fmt.Sprintf("gh_wrong_%s_%d", forwardedFor, i)); st {
		case http.StatusUnauthorized:
			continue
		case http.StatusTooManyRequests:
			return
		default:
			t.Fatalf("failed login %d: %d", i+1, st)
		}
	}
	t.Fatal("50 failed logins and never refused")
}

func TestLoginLimiterBehindAProxy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		t.Run("with --trusted-proxies one client does not lock out another", func(t *testing.T) {
			e := webtest.New(t, dialect, web.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
			op := e.Token(models.RoleOperator, "op")
			lockOut(t, e, "203.0.113.7")
			if st := loginFrom(t, e, "203.0.113.7", "gh_another_wrong"); st != http.StatusTooManyRequests {
				t.Fatalf("the locked-out client's next wrong token: %d, want 429", st)
			}
			if st := loginFrom(t, e, "203.0.113.8", "gh_yet_another_wrong"); st != http.StatusUnauthorized {
				t.Fatalf("a wrong token from another client behind the same proxy: %d, want 401", st)
			}
			if st := loginFrom(t, e, "203.0.113.7", op); st != http.StatusSeeOther {
				t.Fatalf("the right token from the locked-out client: %d, want 303", st)
			}
		})
		t.Run("without it a forwarded header does not escape the limit", func(t *testing.T) {
			e := webtest.New(t, dialect, web.Config{})
			op := e.Token(models.RoleOperator, "op")
			lockOut(t, e, "203.0.113.7")
			if st := loginFrom(t, e, "198.51.100.1", "gh_another_wrong"); st != http.StatusTooManyRequests {
				t.Fatalf("a client naming another address: %d, want 429", st)
			}
			if st := loginFrom(t, e, "198.51.100.1", op); st != http.StatusSeeOther {
				t.Fatalf("the right token: %d, want 303", st)
			}
		})
	})
}
