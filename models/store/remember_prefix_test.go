package store_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/rules/rulestest"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestEnvPrefixInTheStore runs the environment-prefix corpus against the
// store's matchers on each database: an operator remembered each corpus
// command for the agent's session (`go build ./...`, `cargo build`, …), and
// an approve rule names each exactly; the agent then files the command with
// a prefix. Only an allowlisted prefix (LANG, LC_*, TZ, NO_COLOR, TERM,
// COLUMNS, CI) is decided by the grant or the rule; any other stays open for
// a person (`GOENV=./evil.env go build ./...` was decided_via remembered).
func TestEnvPrefixInTheStore(t *testing.T) {
	corpus := rulestest.EnvPrefixCorpus()
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		p := agent(t, s, "claude")

		t.Run("a remembered allow", func(t *testing.T) {
			grants := map[string]*models.Remembered{}
			for _, cmd := range rulestest.EnvPrefixCommands() {
				grants[cmd] = remember(t, s, file(t, s, p, shellFiling(cmd, "sPrefix", "/repo")), store.RememberSpec{Scope: "session", For: "1h"})
			}
			for _, c := range corpus {
				t.Run(c.Name(), func(t *testing.T) {
					r := file(t, s, p, shellFiling(c.Text(), "sPrefix", "/repo"))
					if c.Match {
						wantRemembered(t, r, grants[c.Command])
					} else {
						wantOpen(t, r)
					}
				})
			}
		})

		t.Run("an approve rule", func(t *testing.T) {
			rs, err := rules.ParseRules("rules.yaml", []byte(rulestest.RulesFile("approve")))
			if err != nil {
				t.Fatal(err)
			}
			s.Rules = rules.NewRuleSet(rs)
			t.Cleanup(func() { s.Rules = nil })
			for _, c := range corpus {
				t.Run(c.Name(), func(t *testing.T) {
					// Another session: no grant of the subtest above applies.
					r := file(t, s, p, shellFiling(c.Text(), "sRule", "/elsewhere"))
					decided := r.Status == models.StatusResolved && r.DecidedVia != nil && strings.HasPrefix(*r.DecidedVia, "rule:")
					if decided != c.Match || (!c.Match && r.Status != models.StatusOpen) {
						t.Fatalf("status %s via %v, want a rule's decision: %v", r.Status, r.DecidedVia, c.Match)
					}
				})
			}
		})
	})
}
