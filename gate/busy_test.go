package gate_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/web"
)

// TestGatehouseBusyIsNotAnOutage: Gatehouse refusing a filing with 429 (the
// runtime token's filing allowance) reaches the agent as a 429 it can act on,
// with Retry-After, not as a 502 that says Gatehouse is down.
func TestGatehouseBusyIsNotAnOutage(t *testing.T) {
	e := newEnvLimited(t, web.Config{RuntimeFilingRate: 0.001, RuntimeFilingBurst: 1})
	e.ask(t, "PUT", mergePath, mergeBody) // spends the one filing
	a := e.send(t, "PUT", "/repos/acme/widgets/pulls/8/merge", mergeBody)
	m := a.JSON(t)
	secs, err := strconv.Atoi(a.Header.Get("Retry-After"))
	if a.Status != http.StatusTooManyRequests || m["error"] != "gatehouse_busy" || err != nil || secs < 1 {
		t.Fatalf("over the allowance: %d Retry-After=%q %s", a.Status, a.Header.Get("Retry-After"), a.Body)
	}
	detail, _ := m["detail"].(string)
	for _, want := range []string{"Nothing was sent", "Retry-After", "identical request"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the detail does not say %q: %s", want, detail)
		}
	}
	if n := len(e.up.Hits()); n != 0 {
		t.Fatalf("upstream hits %d", n)
	}
}
