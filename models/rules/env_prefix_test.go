package rules_test

import (
	"slices"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/rules/rulestest"
)

// TestEnvPrefixCorpus runs the environment-prefix corpus against every
// matcher this package has: an approve rule and a hold rule for the command
// exactly, a remembered allow of each family the page offers for it, and the
// remember choices themselves. A prefix off the allowlist is no match, and
// the page offers nothing to remember for its line; an allowlisted one
// matches as the bare command does. Deny still sees through any prefix.
func TestEnvPrefixCorpus(t *testing.T) {
	approve, hold, deny := mustRules(t, rulestest.RulesFile("approve")), mustRules(t, rulestest.RulesFile("hold")), mustRules(t, rulestest.RulesFile("deny"))
	grants := map[string][]*rules.RememberedMatch{}
	for _, cmd := range rulestest.EnvPrefixCommands() {
		choices := rules.RememberChoices("Bash", cmd)
		if len(choices) == 0 {
			t.Fatalf("%q: nothing to remember", cmd)
		}
		for _, ch := range choices {
			grants[cmd] = append(grants[cmd], remembered(t, ch.Match))
		}
		if v := approve.Evaluate(shellReq(cmd)); v.Action != rules.RuleApprove {
			t.Fatalf("%q itself is not approved: %+v", cmd, v)
		}
	}
	for _, c := range rulestest.EnvPrefixCorpus() {
		t.Run(c.Name(), func(t *testing.T) {
			line := c.Text()
			for _, tool := range []string{"Bash", "shell"} {
				r := req(func(r *models.Request) { r.Tool, r.Command = tool, line })
				if v := approve.Evaluate(r); (v.Action == rules.RuleApprove) != c.Match {
					t.Errorf("%s approve rule: %+v, want match %v", tool, v, c.Match)
				}
				if v := hold.Evaluate(r); (v.Action == rules.RuleHold) != c.Match {
					t.Errorf("%s hold rule: %+v, want match %v", tool, v, c.Match)
				}
				if v := deny.Evaluate(r); v.Action != rules.RuleDeny && c.Prefix[0] != '\'' {
					t.Errorf("%s deny rule: %+v: a prefix hid the command from deny", tool, v)
				}
				for _, g := range grants[c.Command] {
					if g.Matches(tool, line) != c.Match {
						t.Errorf("%s remembered allow: match %v, want %v", tool, !c.Match, c.Match)
					}
				}
			}
			got, bare := rules.RememberChoices("Bash", line), rules.RememberChoices("Bash", c.Command)
			switch {
			case c.Match && !slices.Equal(got, bare):
				t.Errorf("remember choices %+v, want those of the bare command %+v", got, bare)
			case !c.Match && c.Prefix[0] != '\'' && got != nil:
				t.Errorf("remember choices %+v offered for a prefixed line", got)
			case !c.Match && slices.ContainsFunc(got, func(ch rules.RememberChoice) bool { return slices.Contains(bare, ch) }):
				// 'LANG'=C go … runs the program LANG=C: it may be remembered as that, never as go.
				t.Errorf("remember choices %+v include the bare command's", got)
			}
		})
	}
}

// TestPrefixWarning: `rules check` warns of a command pattern written with a
// prefix assignment, which no shell line can meet.
func TestPrefixWarning(t *testing.T) {
	for _, c := range []struct {
		name, tools, pattern string
		warn                 bool
	}{
		{"a prefix", "Bash", `^GOFLAGS=-mod=mod go build`, true},
		{"an optional prefix", "[Bash, shell]", `^(?:LANG=C )?go build$`, true},
		{"no tool named", "", `^CI=true npm test$`, true},
		{"a plain command", "Bash", `^go build( .*)?$`, false},
		{"an assignment as an argument", "Bash", `^make V=1$`, false},
		{"a tool that is not a shell", "Read", `^A=b$`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool := ""
			if c.tools != "" {
				tool = "tool: " + c.tools + ", "
			}
			rs := mustRules(t, "rules:\n  - name: r\n    match: {"+tool+"command: '"+c.pattern+"'}\n    action: approve\n")
			if got := rs.List()[0].PrefixWarning() != ""; got != c.warn {
				t.Fatalf("warning %v, want %v", got, c.warn)
			}
		})
	}
}
