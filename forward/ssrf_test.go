package forward_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// A runtime's callback must not turn the forwarder into a probe of the
// server's network: a redirect is never followed, and what the runtime (or an
// operator) reads of a failed attempt never carries a dial error.
func TestForwarderRefusesRedirectsAndHidesDialErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		g := newForwardRig(t, s, changes)

		for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound, http.StatusSeeOther} {
			t.Run("redirect "+http.StatusText(code), func(t *testing.T) {
				var victim atomic.Int32
				inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { victim.Add(1) }))
				defer inside.Close()
				rs := newRuntimeServer(t, g.key, g.register(t), func(_ int, w http.ResponseWriter, r *http.Request) bool {
					http.Redirect(w, r, inside.URL+"/admin", code)
					return true
				}, nil)
				events, stop := startForwarder(t, s, changes, g.key, time.Hour)
				defer stop()
				g.decided(t, rs.RuntimeID)
				e := next(t, events, "attempt")
				if e.A.State != models.ActuationPending || e.A.HTTPStatus != code || e.A.Error != "redirect refused" {
					t.Fatalf("attempt = %+v, want a failed attempt %d \"redirect refused\"", e.A, code)
				}
				if n := victim.Load(); n != 0 {
					t.Fatalf("the redirect target was called %d times", n)
				}
				if n := rs.Calls.Load(); n != 1 {
					t.Fatalf("the runtime was called %d times, want 1", n)
				}
			})
		}

		t.Run("dial error is generic", func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			closed := "http://" + ln.Addr().String()
			ln.Close() // nothing listens there now: connection refused
			id := g.register(t)(closed)
			events, stop := startForwarder(t, s, changes, g.key, time.Hour)
			defer stop()
			r := g.decided(t, id)
			e := next(t, events, "attempt")
			if e.A.State != models.ActuationPending || e.A.Error != "connection failed" {
				t.Fatalf("attempt = %+v, want \"connection failed\"", e.A)
			}
			rt, err := s.GetRuntime(bg, id)
			if err != nil {
				t.Fatal(err)
			}
			trail, err := s.AuditTrail(bg, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			seen := rt.LastResult
			for _, a := range trail {
				seen += " " + a.Detail
			}
			for _, leak := range []string{"dial", "refused", "127.0.0.1", "tcp"} {
				if strings.Contains(seen, leak) {
					t.Fatalf("a failed attempt shows %q: %s", leak, seen)
				}
			}
		})
	})
}
