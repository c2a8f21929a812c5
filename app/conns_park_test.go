package app_test

import (
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// A parked wait's socket leaves Go's poller (internal/park/fd_linux.go) but not
// the connection cap: it counts until its answer is written and it is closed.
func TestParkedWaitCountsAgainstTheCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		started, ended := make(chan struct{}, 1), make(chan struct{}, 1)
		e := webtest.NewApp(t, app.Config{Database: storetest.URL(t, dialect), Conn: app.ConnConfig{MaxConnections: 2},
			Web: web.Config{OnWaitStart: func() { started <- struct{}{} }, OnWaitEnd: func() { ended <- struct{}{} }}})
		ag := e.Token(models.RoleAgent, "a")
		id := e.File(ag, nil)["id"].(string) // e's client keeps this one connection, the first of two

		w := dialRaw(t, e)
		w.send("GET /v1/requests/" + id + "/wait?timeout=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ag + "\r\n\r\n")
		testkit.Recv(t, started, "the wait to be held")

		t.Run("a connection beside a parked wait is over the cap", func(t *testing.T) {
			c := dialRaw(t, e)
			c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(capWait))
			res, err := http.ReadResponse(c.r, nil)
			var ne net.Error
			switch {
			case err != nil && errors.As(err, &ne) && ne.Timeout():
				t.Fatal("no answer, the connection is held")
			case err == nil && res.StatusCode != http.StatusServiceUnavailable:
				t.Fatalf("beside a parked wait: %d, want 503", res.StatusCode)
			}
		})

		t.Run("once the wait is answered and closed its connection no longer counts", func(t *testing.T) {
			if res := w.response(); res.StatusCode != http.StatusOK || !res.Close {
				t.Fatalf("wait %d close=%v", res.StatusCode, res.Close)
			}
			w.closedByServer(capWait)
			testkit.Recv(t, ended, "the wait to let go")
			c := dialRaw(t, e)
			c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			if res := c.response(); res.StatusCode != http.StatusOK {
				t.Fatalf("healthz %d", res.StatusCode)
			}
		})
	})
}
