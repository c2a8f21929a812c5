package gate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/gatehousehq/gatehouse/client"
)

// TestGatehouseUnreachable: without Gatehouse nothing can be released; the
// gate's own allow and deny still hold, and an ask answers 502.
func TestGatehouseUnreachable(t *testing.T) {
	gone := httptest.NewServer(nil)
	gone.Close()
	e := newEnv(t, func(c *gateConfig) { c.Grants = client.New(gone.URL, "rt") })
	if a := e.send(t, "GET", "/repos/acme/widgets", ""); a.Status != 200 {
		t.Fatalf("allowed read: %d %s", a.Status, a.Body)
	}
	if m := e.send(t, "DELETE", "/repos/acme/widgets", "").JSON(t); m["error"] != "gate_denied" {
		t.Fatalf("denied delete: %v", m)
	}
	a := e.send(t, "PUT", mergePath, mergeBody)
	if m := a.JSON(t); a.Status != 502 || m["error"] != "gatehouse_unavailable" {
		t.Fatalf("ask: %d %s", a.Status, a.Body)
	}
	if n := len(e.up.Hits()); n != 1 {
		t.Fatalf("upstream hits %d, want only the read", n)
	}
}
