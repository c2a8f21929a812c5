package web_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServerLinksNoAPIClient keeps the server off its own API client: what
// the hooks and the server share lives in hookanswer and api.
func TestServerLinksNoAPIClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/gatehousehq/gatehouse/web").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, p := range deps {
		if p == "github.com/gatehousehq/gatehouse/client" {
			t.Fatalf("web links %s", p)
		}
	}
	if !strings.Contains(string(out), "github.com/gatehousehq/gatehouse/hookanswer\n") {
		t.Fatalf("go list printed no hookanswer package; is the list right?\n%s", out)
	}
}
