package web_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/rules/rulestest"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestRememberChoicesEnvPrefix runs the environment-prefix corpus against what
// the page offers to remember: for a line whose prefix is off the allowlist
// (`GOENV=./evil.env go build ./...`) the card has no "Remember…" control, and
// the decide route refuses to remember it; an allowlisted prefix offers the
// same families as the bare command.
func TestRememberChoicesEnvPrefix(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := startPage(t, dialect)
		b := e.browser()
		e.login(b)
		for _, c := range rulestest.EnvPrefixCorpus() {
			t.Run(c.Name(), func(t *testing.T) {
				r := e.shell(c.Text(), "sEnv")
				var offered []string
				e.get(b, "/requests/"+r.ID, http.StatusOK).Find(`input[name="remember_match"]`).Each(func(_ int, in *goquery.Selection) {
					offered = append(offered, in.AttrOr("value", ""))
				})
				var want []string
				if c.Match {
					for _, ch := range rules.RememberChoices("Bash", c.Command) {
						want = append(want, ch.Match)
					}
				}
				if c.Prefix[0] == '\'' {
					return // the program is LANG=C: it may be remembered as that
				}
				if !slices.Equal(offered, want) {
					t.Fatalf("the card offers %q, want %q", offered, want)
				}
			})
		}
		t.Run("the decide route refuses to remember a prefixed line", func(t *testing.T) {
			r := e.shell("GOENV=./evil.env go build ./...", "sEnv")
			status, body := e.call("POST", "/v1/requests/"+r.ID+"/decide", e.opToken, map[string]any{"version": r.Version, "decision": "once",
				"remember": map[string]any{"scope": "session", "for": "1h", "match": `^go build \./\.\.\.$`}})
			if status != http.StatusBadRequest {
				t.Fatalf("%d %s", status, body)
			}
			if later := e.shell("GOENV=./evil.env go build ./...", "sEnv"); later.Status != "open" {
				t.Fatalf("later: %s via %v", later.Status, later.DecidedVia)
			}
		})
	})
}
