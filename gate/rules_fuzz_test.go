package gate_test

import (
	"errors"
	"testing"

	"github.com/gatehousehq/gatehouse/gate"
)

// FuzzParseRules: any gate rules file compiles or is refused with a
// *RuleError, never a panic, and a compiled file decides any request.
func FuzzParseRules(f *testing.F) {
	for _, src := range []string{rulesYAML, "", "rules: []\n", "rules:\n  - match: {method: GET, path: '^/a'}\n    action: allow\n",
		"rules:\n  ! 0\n", "rules:\n  - &a {name: x, action: deny}\n  - *a\n", "a: 1\n---\nb: 2\n"} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := gate.ParseRules("r.yaml", data)
		if err != nil {
			var re *gate.RuleError
			if rs != nil || !errors.As(err, &re) {
				t.Fatalf("refusal %T %v with rules %v; want a *RuleError and no rules", err, err, rs)
			}
			return
		}
		for _, m := range []string{"GET", "DELETE", ""} {
			rs.Decide(m, "/repos/a/b")
		}
	})
}
