package gate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/gate"
)

// TestDocRules reads the rules file and its table of decisions from
// docs/gate.md, so the page cannot drift from what the gate does.
func TestDocRules(t *testing.T) {
	doc, err := os.ReadFile("../docs/gate.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(doc)
	block := after(t, page, "<!-- gate.yaml -->\n```yaml\n")
	block = block[:strings.Index(block, "```")]
	file, err := os.ReadFile("testdata/github.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if block != string(file) {
		t.Fatalf("docs/gate.md quotes a different rules file than gate/testdata/github.yaml:\n%s", block)
	}
	rs, err := gate.ParseRules("github.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(after(t, page, "<!-- decisions -->\n"), "\n") {
		if !strings.HasPrefix(line, "| `") {
			if rows > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		method, path, _ := strings.Cut(strings.Trim(cells[0], "`"), " ")
		rows++
		t.Run(method+" "+path, func(t *testing.T) {
			if a, r := rs.Decide(method, path); a != cells[1] || r != cells[2] {
				t.Fatalf("the doc says %s by %s; the gate decides %s by %s", cells[1], cells[2], a, r)
			}
		})
	}
	if rows < 10 {
		t.Fatalf("read only %d rows of the decisions table", rows)
	}
}

func after(t *testing.T, s, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, marker)
	if !ok {
		t.Fatalf("docs/gate.md has no %q", marker)
	}
	return rest
}
