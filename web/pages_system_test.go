package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

const systemRules = `rules:
  - name: git-read
    match: {tool: Bash, command: "^git status"}
    action: approve
  - name: slow-deny
    match: {risk: high}
    action: hold
    window: 90s
    then: deny
`

func TestSystemPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		e := startPage(t, dialect, func(st *store.Store) {
			rs, err := rules.ParseRules("rules.yaml", []byte(systemRules))
			if err != nil {
				t.Fatal(err)
			}
			st.Rules = rules.NewRuleSet(rs)
		})
		b := e.browser()
		e.login(b)

		t.Run("the header links to it", func(t *testing.T) {
			doc := e.get(b, "/", http.StatusOK)
			if href, _ := doc.Find(`[data-testid="system-link"]`).Attr("href"); href != "/system" {
				t.Fatalf("system link = %q", href)
			}
		})

		t.Run("empty sections say so", func(t *testing.T) {
			doc := e.get(b, "/system", http.StatusOK)
			for _, id := range []string{"runtimes-empty", "devices-empty"} {
				if doc.Find(`[data-testid="`+id+`"]`).Length() != 1 {
					t.Errorf("no %s", id)
				}
			}
		})

		_, rtSecret, err := e.store.CreateToken(ctx, models.RoleRuntime, "laptop")
		if err != nil {
			t.Fatal(err)
		}
		rt, err := client.New(e.url, rtSecret).RegisterRuntime(ctx, api.RuntimeRegistration{Name: "laptop", Machine: "m1", CallbackURL: "http://127.0.0.1:1/hook"})
		if err != nil {
			t.Fatal(err)
		}
		token := strings.Repeat("0a1b", 15) + "c0ffee42"
		if err := e.operator.Do(ctx, http.MethodPost, "/v1/devices", nil, map[string]string{"token": token, "name": "phone"}, nil); err != nil {
			t.Fatal(err)
		}

		t.Run("an operator sees runtimes, devices and rules", func(t *testing.T) {
			doc := e.get(b, "/system", http.StatusOK)
			row := doc.Find(`[data-testid="runtime-row"][data-id="` + rt.ID + `"]`)
			if row.Length() != 1 {
				t.Fatalf("runtime %s not listed", rt.ID)
			}
			for id, want := range map[string]string{"runtime-name": "laptop", "runtime-machine": "m1", "runtime-callback": "http://127.0.0.1:1/hook",
				"runtime-delivery": "none yet", "runtime-failures": "0", "runtime-pending": "0"} {
				if got := strings.TrimSpace(row.Find(`[data-testid="` + id + `"]`).Text()); got != want {
					t.Errorf("%s = %q, want %q", id, got, want)
				}
			}
			dev := doc.Find(`[data-testid="device-row"]`)
			if dev.Length() != 1 || strings.TrimSpace(dev.Find(`[data-testid="device-kind"]`).Text()) != "APNs" {
				t.Fatalf("devices: %q", dev.Text())
			}
			if got := strings.TrimSpace(dev.Find(`[data-testid="device-token"]`).Text()); got != "…c0ffee42" {
				t.Errorf("device token = %q, want the masked tail", got)
			}
			html, _ := doc.Html()
			if strings.Contains(html, token) || strings.Contains(html, token[:16]) {
				t.Error("the page shows the device token")
			}
			rs := doc.Find(`[data-testid="rule-row"]`)
			if rs.Length() != 2 {
				t.Fatalf("rules: %d rows", rs.Length())
			}
			hold := doc.Find(`[data-testid="rule-row"][data-name="slow-deny"]`)
			if got := strings.TrimSpace(hold.Find(`[data-testid="rule-window"]`).Text()); got != "1m30s then deny" {
				t.Errorf("window = %q", got)
			}
			if got := strings.TrimSpace(doc.Find(`[data-testid="rules-path"]`).Text()); got != "rules.yaml" {
				t.Errorf("rules file = %q", got)
			}
		})

		t.Run("nobody else sees it", func(t *testing.T) {
			res, err := e.browser().Get(e.url + "/system")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
				t.Errorf("anonymous: %d %s, want 303 to /login", res.StatusCode, res.Header.Get("Location"))
			}
			_, agSecret, err := e.store.CreateToken(ctx, models.RoleAgent, "peek")
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, e.url+"/system", nil)
			req.Header.Set("Authorization", "Bearer "+agSecret)
			res, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("agent: %d, want 403", res.StatusCode)
			}
		})
	})

	t.Run("a section without its source is left out", func(t *testing.T) {
		e := startBarePage(t)
		b := e.browser()
		e.login(b)
		doc := e.get(b, "/system", http.StatusOK)
		if doc.Find(`[data-testid="system"]`).Length() != 1 {
			t.Fatal("no system page")
		}
		for _, id := range []string{"runtimes", "devices", "rules"} {
			if doc.Find(`[data-testid="`+id+`"]`).Length() != 0 {
				t.Errorf("%s shown without its source", id)
			}
		}
	})
}
