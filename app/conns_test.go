package app_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// capWait bounds each raw read, so a connection the server should have closed
// fails the test instead of hanging it.
const capWait = 10 * time.Second

// rawConn is a TCP connection to the service, spoken to by hand.
type rawConn struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, e *webtest.Env) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", e.App.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.Conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// response reads one HTTP response and its body.
func (c *rawConn) response() *http.Response {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(capWait))
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("no response: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// closedByServer waits for the server to close the connection (EOF or a
// reset), failing if it is still open after within.
func (c *rawConn) closedByServer(within time.Duration) {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, c.r)
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		c.t.Fatalf("the connection is still open after %s", within)
	}
}

func TestConnectionLimits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		conn := app.ConnConfig{IdleTimeout: 200 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond,
			BodyTimeout: 300 * time.Millisecond, MaxConnections: 100}
		e := webtest.NewApp(t, app.Config{Database: storetest.URL(t, dialect), Conn: conn})

		t.Run("an idle keep-alive connection is closed", func(t *testing.T) {
			c := dialRaw(t, e)
			c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			if res := c.response(); res.StatusCode != http.StatusOK || res.Close {
				t.Fatalf("healthz %d close=%v", res.StatusCode, res.Close)
			}
			c.closedByServer(capWait)
		})

		t.Run("headers that never finish are cut", func(t *testing.T) {
			c := dialRaw(t, e)
			c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
			c.closedByServer(capWait)
		})

		t.Run("a slow body is cut", func(t *testing.T) {
			c := dialRaw(t, e)
			c.send("POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nt")
			c.closedByServer(capWait)
		})

		t.Run("a long-poll outlives the body timeout", func(t *testing.T) {
			ag := e.Token(models.RoleAgent, "a")
			id := e.File(ag, nil)["id"].(string)
			c := dialRaw(t, e)
			c.send("GET /v1/requests/" + id + "/wait?timeout=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ag + "\r\n\r\n")
			res := c.response()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("wait %d", res.StatusCode)
			}
		})
	})
}

func TestConnectionCap(t *testing.T) {
	e := webtest.NewApp(t, app.Config{Database: storetest.URL(t, "sqlite"), Conn: app.ConnConfig{MaxConnections: 2}})
	for range 2 {
		c := dialRaw(t, e)
		c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		if res := c.response(); res.StatusCode != http.StatusOK {
			t.Fatalf("healthz %d", res.StatusCode)
		}
	}
	t.Run("the connection over the cap is refused", func(t *testing.T) {
		c := dialRaw(t, e)
		c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(capWait))
		res, err := http.ReadResponse(c.r, nil)
		if err == nil && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("over the cap: %d, want 503 or a closed connection", res.StatusCode)
		}
		var ne net.Error
		if err != nil && errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("over the cap: no answer, the connection is held")
		}
		if err == nil && res.Header.Get("Retry-After") == "" {
			t.Fatal("a 503 without Retry-After")
		}
	})
}
