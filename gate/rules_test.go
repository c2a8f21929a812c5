package gate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/gate"
)

func TestParseRules(t *testing.T) {
	t.Run("first match wins; unmatched asks", func(t *testing.T) {
		rs, err := gate.ParseRules("r.yaml", []byte(rulesYAML))
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct{ method, path, action, rule string }{
			{"GET", "/repos/a/b/pulls/7/merge", gate.Allow, "reads"},
			{"DELETE", "/repos/a/b", gate.Deny, "no-deletes"},
			{"DELETE", "/repos/a/b/issues/1", gate.Ask, gate.Unmatched},
			{"PUT", "/repos/a/b/pulls/7/merge", gate.Ask, "merges"},
			{"PUT", "/repos/a/b/pulls/7/merge/x", gate.Ask, gate.Unmatched},
			{"POST", "/repos/a/b/issues/1/comments", gate.Allow, "comments"},
			{"PATCH", "/", gate.Ask, gate.Unmatched},
		}
		for _, c := range cases {
			if a, r := rs.Decide(c.method, c.path); a != c.action || r != c.rule {
				t.Errorf("%s %s: %s by %s, want %s by %s", c.method, c.path, a, r, c.action, c.rule)
			}
		}
	})
	t.Run("an empty file asks for everything", func(t *testing.T) {
		rs, err := gate.ParseRules("r.yaml", nil)
		if err != nil || rs.Len() != 0 {
			t.Fatalf("%v %d", err, rs.Len())
		}
		if a, _ := rs.Decide("GET", "/"); a != gate.Ask {
			t.Fatalf("unmatched: %s", a)
		}
	})
	t.Run("unnamed rules are numbered", func(t *testing.T) {
		rs, err := gate.ParseRules("r.yaml", []byte("rules:\n  - match: {method: GET}\n    action: allow\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, r := rs.Decide("GET", "/"); r != "rule-1" {
			t.Fatalf("name: %s", r)
		}
	})
	broken := []struct{ name, file, at, msg string }{
		{"bad action", "rules:\n  - match: {method: GET}\n    action: permit\n", "r.yaml:3:13", `action "permit"`},
		{"no action", "rules:\n  - match: {method: GET}\n", "r.yaml:2:5", "no action"},
		{"bad regexp", "rules:\n  - action: ask\n    match:\n      path: '^/repos/(['\n", "r.yaml:4:13", "not a regular expression"},
		{"lower-case method", "rules:\n  - action: ask\n    match: {method: get}\n", "r.yaml:3:21", "upper-case"},
		{"unknown field", "rules:\n  - action: ask\n    when: {method: GET}\n", "r.yaml:3:5", "unknown field"},
		{"not YAML", "rules:\n  - action: [ask\n", "r.yaml:2:", ""},
		{"duplicate name", "rules:\n  - {name: a, action: ask}\n  - {name: a, action: allow}\n", "r.yaml:3:", "used twice"},
		{"prose as a name", "rules:\n  - {name: 'approve this now', action: ask}\n", "r.yaml:2:", "rule name"},
		{"tagged scalar for the list", "rules:\n  ! 0\n", "r.yaml:2:3", "YAML tags"},
		{"tagged match", "rules:\n  - action: ask\n    match: !x 1\n", "r.yaml:3:12", "YAML tags such as !x"},
	}
	for _, b := range broken {
		t.Run("broken: "+b.name, func(t *testing.T) {
			_, err := gate.ParseRules("r.yaml", []byte(b.file))
			var re *gate.RuleError
			if !errors.As(err, &re) {
				t.Fatalf("want a RuleError, got %v", err)
			}
			if !strings.HasPrefix(err.Error(), b.at) || !strings.Contains(err.Error(), b.msg) {
				t.Fatalf("error %q, want it at %s saying %q", err, b.at, b.msg)
			}
		})
	}
}
