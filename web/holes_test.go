package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// The small holes of the attack pass (issue 15, finding 5): each body here was
// accepted, or answered with Go's words, before.
func TestSmallHolesInTheAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ag := e.Token(models.RoleAgent, "a")
		op := e.Token(models.RoleOperator, "op")
		id := e.File(ag, nil)["id"].(string)
		opts := `[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]`
		cases := []struct {
			name, method, path, token, body string
			code                            string
			detail                          string // a substring the detail must hold
		}{
			// 18446744074 s × 1e9 overflows int64 into an expiry 0.29 s away.
			{"expires_in overflowing", "POST", "/v1/requests", ag, `{"title":"x","options":` + opts + `,"expires_in":18446744074}`, "invalid_input", "expires_in"},
			{"expires_in as string", "POST", "/v1/requests", ag, `{"title":"x","options":` + opts + `,"expires_in":"60"}`, "invalid_json", "expires_in must be a whole number"},
			{"expires_in a fraction", "POST", "/v1/requests", ag, `{"title":"x","options":` + opts + `,"expires_in":1.5}`, "invalid_json", "expires_in must be a whole number"},
			{"title as number", "POST", "/v1/requests", ag, `{"title":7,"options":` + opts + `}`, "invalid_json", "title must be a string"},
			{"duplicate key on filing", "POST", "/v1/requests", ag, `{"title":"x","title":"rm -rf /","options":` + opts + `}`, "invalid_input", `"title"`},
			{"duplicate nested key", "POST", "/v1/requests", ag, `{"title":"x","options":[{"id":"once","label":"a","effect":"allow","effect":"deny"}]}`, "invalid_input", `"effect"`},
			{"duplicate key on decide", "POST", "/v1/requests/" + id + "/decide", op, `{"version":1,"decision":"deny","decision":"once"}`, "invalid_input", `"decision"`},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r0, a0 := counts(t, e.Store)
				status, body := e.Do(c.method, c.path, c.token, c.body)
				if status != http.StatusBadRequest {
					t.Fatalf("%d, want 400: %s", status, body)
				}
				m := webtest.JSON(t, body)
				detail, _ := m["detail"].(string)
				if m["error"] != c.code || !strings.Contains(detail, c.detail) {
					t.Fatalf("body %s, want code %s and a detail with %q", body, c.code, c.detail)
				}
				for _, goWords := range []string{"Go ", "fileInput", "api.", "int64", "struct"} {
					if strings.Contains(detail, goWords) {
						t.Fatalf("the detail names Go: %s", detail)
					}
				}
				if r1, a1 := counts(t, e.Store); r1 != r0 || a1 != a0 {
					t.Fatalf("bad input wrote: requests %d->%d, audit %d->%d", r0, r1, a0, a1)
				}
			})
		}
		t.Run("the request is untouched", func(t *testing.T) {
			r, _ := e.Store.GetRequest(context.Background(), id)
			if r.Version != 1 || r.Status != "open" {
				t.Fatalf("%s v%d", r.Status, r.Version)
			}
		})
	})
}

func TestSmallHolesInThePage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := startPage(t, dialect)
		b := e.browser()
		csrf := e.login(b)
		form := func(version int, back string) url.Values {
			return url.Values{"csrf": {csrf}, "version": {strconv.Itoa(version)}, "decision": {"deny"}, "back": {back}}
		}

		for _, back := range []string{"/\t/evil.example", "/%09/evil.example", "//evil.example", "/\\evil.example",
			"https://evil.example/", "http:evil.example", "/\r\nLocation: https://evil.example", "\t//evil.example", " //evil.example"} {
			t.Run("back "+strconv.Quote(back)+" stays on this site", func(t *testing.T) {
				r := e.file("Run the tests")
				res := e.postForm(b, "/requests/"+r.ID+"/decide", form(r.Version, back), nil)
				loc := res.Header.Get("Location")
				if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") ||
					strings.ContainsAny(loc, "\\\t\r\n") || strings.Contains(loc, "evil.example") {
					t.Fatalf("decide = %d Location %q", res.StatusCode, loc)
				}
			})
		}
		t.Run("a path on this site is kept", func(t *testing.T) {
			r := e.file("Run the tests")
			res := e.postForm(b, "/requests/"+r.ID+"/decide", form(r.Version, "/requests/"+r.ID+"?x=1"), nil)
			if loc := res.Header.Get("Location"); loc != "/requests/"+r.ID+"?x=1" {
				t.Fatalf("Location %q", loc)
			}
		})

		t.Run("a CSRF token in the URL query is not read", func(t *testing.T) {
			r := e.file("Run the tests")
			f := form(r.Version, "/")
			f.Del("csrf")
			res := e.postForm(b, "/requests/"+r.ID+"/decide?csrf="+url.QueryEscape(csrf), f, nil)
			if res.StatusCode != http.StatusForbidden {
				t.Fatalf("decide with the token in the query = %d, want 403", res.StatusCode)
			}
			if got, _ := e.agent.Get(context.Background(), r.ID); got.Status != "open" {
				t.Fatalf("status = %s", got.Status)
			}
		})
	})
}
