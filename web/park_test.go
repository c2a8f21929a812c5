package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// rawWait sends a wait on its own TCP connection, with extra bytes after the
// request (a pipelined request, say), and returns the connection.
func rawWait(t *testing.T, e *webtest.Env, id, token, timeout, extra string) net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(e.URL, "http://")
	c, err := net.DialTimeout("tcp", addr, guardTime)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /v1/requests/%s/wait?timeout=%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n%s", id, timeout, addr, token, extra)
	return c
}

// guardTime bounds a blocking read in these tests: a deadline for a hung
// test, not a speed assertion.
const guardTime = 30 * time.Second

// readAnswer reads one HTTP response from c and then expects the server to
// close the connection.
func readAnswer(t *testing.T, c net.Conn) (*http.Response, map[string]any) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(guardTime))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read the wait's answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(body)) != resp.ContentLength {
		t.Fatalf("Content-Length %d, body %d bytes", resp.ContentLength, len(body))
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the answer: %q, %v (want the connection closed)", rest, err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return resp, m
}

// sameAsRead fails unless the wait's answer is the record as GET gives it.
func sameAsRead(t *testing.T, e *webtest.Env, token string, got map[string]any) {
	t.Helper()
	_, b := e.Do("GET", "/v1/requests/"+got["id"].(string), token, nil)
	want := webtest.JSON(t, b)
	want["timed_out"] = false
	a, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(a, w) {
		t.Fatalf("wait answered %s\nGET gives   %s", a, w)
	}
}

func TestParkedWait(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		ev, cfg := newEvents()
		e := webtest.New(t, dialect, cfg)
		ag, op := e.Token(models.RoleAgent, "a"), e.Token(models.RoleOperator, "op")

		t.Run("a wait over HTTP/1.1 is parked and answered with the committed record", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			c := rawWait(t, e, id, ag, "60", "")
			ev.held(t, 1)
			if n := e.Server.Parked(); n != 1 {
				t.Fatalf("%d waits parked, want 1", n)
			}
			if st, _ := e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 1, "decision": "once"}); st != 200 {
				t.Fatalf("decide: %d", st)
			}
			resp, got := readAnswer(t, c)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !resp.Close || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("%d %v", resp.StatusCode, resp.Header)
			}
			if got["status"] != "resolved" || got["decision"] != "once" || got["timed_out"] != false {
				t.Fatalf("%v", got)
			}
			sameAsRead(t, e, ag, got)
			testkit.Recv(t, ev.ended, "the wait to let go of its slot")
			if n := e.Server.Parked(); n != 0 {
				t.Fatalf("%d waits still parked", n)
			}
		})

		t.Run("an edit wakes a parked wait with the new version", func(t *testing.T) {
			id := e.File(ag, map[string]any{"sealed": false})["id"].(string) // unsealed: the test edits it
			c := rawWait(t, e, id, op, "60", "")
			ev.held(t, 1)
			if st, b := e.Do("PATCH", "/v1/requests/"+id, ag, map[string]any{"title": "new words"}); st != 200 {
				t.Fatalf("patch: %d %s", st, b)
			}
			_, got := readAnswer(t, c)
			if got["title"] != "new words" || got["version"] != 2.0 || got["status"] != "open" {
				t.Fatalf("%v", got)
			}
			sameAsRead(t, e, ag, got)
			testkit.Recv(t, ev.ended, "the wait to let go of its slot")
		})

		t.Run("the agent cannot get itself approved while it waits, nor by a request pipelined behind the wait", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			decide := `{"version":1,"decision":"once"}`
			pipelined := fmt.Sprintf("POST /v1/requests/%s/decide HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", id, ag, len(decide), decide)
			c := rawWait(t, e, id, ag, "1", pipelined)
			ev.held(t, 1)
			if st, b := e.Do("POST", "/v1/requests/"+id+"/decide", ag, map[string]any{"version": 1, "decision": "once"}); st != 403 {
				t.Fatalf("the agent's own decide: %d %s", st, b)
			}
			resp, got := readAnswer(t, c) // the pipelined request is dropped, never served
			if resp.StatusCode != 200 || got["timed_out"] != true || got["status"] != "open" || got["version"] != 1.0 {
				t.Fatalf("%d %v", resp.StatusCode, got)
			}
			testkit.Recv(t, ev.ended, "the wait to let go of its slot")
			r, err := e.Store.GetRequest(t.Context(), id)
			if err != nil || !r.Open() || r.Version != 1 {
				t.Fatalf("the request after the agent's tries: %+v %v", r, err)
			}
		})

		t.Run("a client holding its answer has its slot back before its connection is closed", func(t *testing.T) {
			// The same server on a listener whose connections' Close waits for
			// the test: the answer is in the client's hands while the server
			// is still closing the connection, the moment a client goes on to
			// its next wait.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			closing := make(chan struct{})
			hs := &http.Server{Handler: e.Server.Handler()}
			go func() { _ = hs.Serve(heldCloses{ln, closing}) }()
			t.Cleanup(func() { hs.Close() })
			letClose := sync.OnceFunc(func() { close(closing) })
			t.Cleanup(letClose) // first of the cleanups: a failed test must not hold the close
			id := e.File(ag, nil)["id"].(string)
			c, err := net.DialTimeout("tcp", ln.Addr().String(), guardTime)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			fmt.Fprintf(c, "GET /v1/requests/%s/wait?timeout=60 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", id, ag)
			ev.held(t, 1)
			if st, _ := e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 1, "decision": "once"}); st != 200 {
				t.Fatalf("decide: %d", st)
			}
			_ = c.SetReadDeadline(time.Now().Add(guardTime))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			n := e.Server.Waiters()
			letClose()
			testkit.Recv(t, ev.ended, "the wait to let go of its slot")
			if n != 0 {
				t.Fatalf("%d waits held while the answered wait's connection was closing", n)
			}
		})

		t.Run("a client that hangs up is noticed without a read of its own", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			c := rawWait(t, e, id, ag, "300", "")
			ev.held(t, 1)
			c.Close()
			testkit.Recv(t, ev.ended, "the wait to let go of its slot")
			if n, p := e.Server.Waiters(), e.Server.Parked(); n != 0 || p != 0 {
				t.Fatalf("%d waits held, %d parked", n, p)
			}
		})
	})
}

// heldCloses is a listener whose connections' Close waits until gate is
// closed.
type heldCloses struct {
	net.Listener
	gate chan struct{}
}

func (l heldCloses) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return heldClose{c, l.gate}, nil
}

type heldClose struct {
	net.Conn
	gate chan struct{}
}

func (c heldClose) Close() error {
	<-c.gate
	return c.Conn.Close()
}
