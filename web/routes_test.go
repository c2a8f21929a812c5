package web_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRoutesLiveInOneTable keeps every route in the one table (routes.go):
// a reader finds what the server answers, and with which guard, in one place.
// Hook routes go through hookRoute (hook_route.go), which answers whatever is
// not a decision as the hook's own "no decision".
func TestRoutesLiveInOneTable(t *testing.T) {
	register := regexp.MustCompile(`\.(GET|POST|PUT|PATCH|DELETE|HEAD|Any|Add|Match)\([^)]*"/`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "routes.go" || f == "hook_route.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if register.MatchString(line) {
				t.Errorf("%s:%d registers a route outside routes.go: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
