package rules_test

import (
	"os"
	"strings"
	"testing"
)

// TestRulesDocExamples loads the example rules file from docs/rules.md and
// checks every verdict its table states, so the doc cannot drift from the code.
func TestRulesDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	_, after, ok := strings.Cut(text, "<!-- rules-example")
	if !ok {
		t.Fatal("docs/rules.md has no rules-example marker")
	}
	_, after, _ = strings.Cut(after, "```yaml\n")
	src, _, _ := strings.Cut(after, "```\n")
	rs := mustRules(t, src)

	_, table, ok := strings.Cut(text, "<!-- verdicts")
	if !ok {
		t.Fatal("docs/rules.md has no verdicts marker")
	}
	rows := 0
	for _, line := range strings.Split(table, "\n")[3:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cmd, verdict, ok := splitRow(line)
		if !ok {
			t.Fatalf("row %q is not | `command` | verdict |", line)
		}
		rows++
		t.Run(cmd, func(t *testing.T) {
			v := rs.Evaluate(shellReq(cmd))
			switch {
			case strings.HasPrefix(verdict, "operator"):
				if v.Action != "" {
					t.Fatalf("%q: %+v, the doc says %s", cmd, v, verdict)
				}
			case v.Rule != verdict || v.Deferred != "":
				t.Fatalf("%q: %+v, the doc says rule %s", cmd, v, verdict)
			}
		})
	}
	if rows < 10 {
		t.Fatalf("only %d verdict rows read", rows)
	}
}

// splitRow reads `| `cmd` | verdict |`: \| is a |, \n a newline.
func splitRow(line string) (cmd, verdict string, ok bool) {
	line = strings.TrimPrefix(line, "| `")
	cmd, rest, ok := strings.Cut(line, "` | ")
	if !ok {
		return "", "", false
	}
	cmd = strings.NewReplacer(`\|`, "|", `\n`, "\n").Replace(cmd)
	return cmd, strings.TrimSuffix(strings.TrimSpace(rest), " |"), true
}
