package rules_test

import (
	"errors"
	"testing"

	"github.com/gatehousehq/gatehouse/models/rules"
)

// FuzzParseRules: any rules file compiles or is refused with *RuleError (a
// line and column to show), never a panic; compiled rules evaluate any
// request, and the same bytes always compile to the same rules.
func FuzzParseRules(f *testing.F) {
	// testdata/fuzz/FuzzParseRules holds the store tests' rules files as seeds too.
	for _, src := range []string{gitReadRules, gitExactRules, anyRules, gitPushRules,
		"rules: []\n", "", "rules:\n  - name: all\n    action: deny\n", "rules:\n  - name: x\n    match: {tool: '('}\n    action: approve\n",
		"a: 1\n---\nb: 2\n", "rules:\n  - &a {name: x, action: deny}\n  - *a\n"} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := rules.ParseRules("rules.yaml", data)
		if err != nil {
			var re *rules.RuleError
			if rs != nil || !errors.As(err, &re) {
				t.Fatalf("refusal %T %v with rules %v; want a *RuleError and no rules", err, err, rs)
			}
			return
		}
		for _, cmd := range []string{"git push origin main", "ls; rm -rf /", ""} {
			rs.Evaluate(shellReq(cmd))
		}
		again, err := rules.ParseRules("rules.yaml", data)
		if err != nil || again.Len() != rs.Len() || again.Digest != rs.Digest {
			t.Fatalf("the same file compiled differently: %v", err)
		}
	})
}
