package bench_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
)

// hundredRules writes 100 rules that each test the tool and a command regexp,
// half of them the title too; none matches the request below until the last,
// so each evaluation walks all 100.
func hundredRules(b *testing.B) *rules.Rules {
	var src strings.Builder
	src.WriteString("rules:\n")
	for i := range 99 {
		fmt.Fprintf(&src, "  - name: rule-%d\n    match:\n      kind: [permission, approval]\n      tool: Bash\n      command: '^(npm|yarn|pnpm) run task%d\\b'\n", i, i)
		if i%2 == 0 {
			fmt.Fprintf(&src, "      text: '(?i)deploy to stage-%d'\n", i)
		}
		src.WriteString("    action: approve\n")
	}
	src.WriteString("  - name: last\n    match:\n      tool: Bash\n      command: '^git (status|diff|log)\\b'\n    action: approve\n")
	rs, err := rules.ParseRules("bench.yaml", []byte(src.String()))
	if err != nil {
		b.Fatal(err)
	}
	if rs.Len() != 100 {
		b.Fatalf("%d rules", rs.Len())
	}
	return rs
}

func BenchmarkRules100(b *testing.B) {
	rs := hundredRules(b)
	opts := []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
	b.Run("last-matches", func(b *testing.B) {
		r := &models.Request{Kind: "permission", Risk: "medium", Tool: "Bash", Command: "git status --short",
			Title: "Run git status in the repository", Summary: "The agent wants to look at the working tree.", Options: opts, CreatedBy: "agent:a1"}
		b.ReportAllocs()
		for b.Loop() {
			if v := rs.Evaluate(r); v.Rule != "last" {
				b.Fatalf("%+v", v)
			}
		}
	})
	b.Run("none-matches", func(b *testing.B) {
		r := &models.Request{Kind: "permission", Risk: "medium", Tool: "Bash", Command: "rm -rf ./build && make -j8 all",
			Title: "Rebuild everything", Summary: "Clean build of the project before the release.", Options: opts, CreatedBy: "agent:a1"}
		b.ReportAllocs()
		for b.Loop() {
			if v := rs.Evaluate(r); v.Rule != "" {
				b.Fatalf("%+v", v)
			}
		}
	})
}
