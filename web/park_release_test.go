package web_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// manyEvents counts wait starts and ends for tests that hold more waits than
// events' buffers.
type manyEvents struct{ started, ended chan struct{} }

func newManyEvents(n int) (*manyEvents, web.Config) {
	ev := &manyEvents{started: make(chan struct{}, n), ended: make(chan struct{}, n)}
	return ev, web.Config{
		OnWaitStart: func() { ev.started <- struct{}{} },
		OnWaitEnd:   func() { ev.ended <- struct{}{} },
	}
}

func recvN(t *testing.T, c <-chan struct{}, n int, what string) {
	t.Helper()
	for range n {
		testkit.Recv(t, c, what)
	}
}

// rawBody reads one whole answer from c and returns its body, then expects
// the connection closed.
func rawBody(t *testing.T, c net.Conn) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(guardTime))
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read the wait's answer: %v", err)
	}
	i := bytes.Index(all, []byte("\r\n\r\n"))
	if !bytes.HasPrefix(all, []byte("HTTP/1.1 200 OK\r\n")) || i < 0 {
		t.Fatalf("answer %q", all)
	}
	return all[i+4:]
}

func TestParkedRelease(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		// More waits than are answered inline and than one worker's slice.
		const n = 150
		ev, cfg := newManyEvents(4 * n) // room for every end, should a check fail before they are read
		e := webtest.New(t, dialect, cfg)
		ag, op := e.Token(models.RoleAgent, "a"), e.Token(models.RoleOperator, "op")

		t.Run("one decision answers every parked wait on the request with the decided record, and no other", func(t *testing.T) {
			id := e.File(ag, nil)["id"].(string)
			other := e.File(ag, nil)["id"].(string)
			cs := make([]net.Conn, n)
			for i := range cs {
				cs[i] = rawWait(t, e, id, ag, "60", "")
			}
			bystander := rawWait(t, e, other, ag, "60", "")
			left := rawWait(t, e, id, ag, "60", "")
			recvN(t, ev.started, n+2, "the waits to start")
			left.Close() // a client that left is not written to: its wait ends first
			testkit.Recv(t, ev.ended, "the wait whose client left to end")
			if p := e.Server.Parked(); p != n+1 {
				t.Fatalf("%d waits parked, want %d", p, n+1)
			}

			if st, _ := e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 1, "decision": "once"}); st != http.StatusOK {
				t.Fatalf("decide: %d", st)
			}
			var first []byte
			for i, c := range cs {
				body := rawBody(t, c)
				if i == 0 {
					got := webtest.JSON(t, body)
					if got["status"] != "resolved" || got["decision"] != "once" || got["version"] != 2.0 || got["timed_out"] != false {
						t.Fatalf("%v", got)
					}
					sameAsRead(t, e, ag, got)
					first = body
				} else if !bytes.Equal(body, first) {
					t.Fatalf("wait %d answered %s\nwait 0 answered %s", i, body, first)
				}
			}
			recvN(t, ev.ended, n, "the answered waits to let go of their slots")
			if p := e.Server.Parked(); p != 1 {
				t.Fatalf("%d waits parked, want the bystander's alone", p)
			}

			if st, _ := e.Do("POST", "/v1/requests/"+other+"/decide", op, map[string]any{"version": 1, "decision": "once"}); st != http.StatusOK {
				t.Fatalf("decide the other: %d", st)
			}
			got := webtest.JSON(t, rawBody(t, bystander))
			if got["id"] != other || got["status"] != "resolved" {
				t.Fatalf("%v", got)
			}
			testkit.Recv(t, ev.ended, "the bystander's wait to end")
		})

		t.Run("waits parked after a change that did not end them are answered by the next", func(t *testing.T) {
			id := e.File(ag, map[string]any{"sealed": false})["id"].(string) // unsealed: the test edits it
			early := rawWait(t, e, id, op, "60", "")
			testkit.Recv(t, ev.started, "the first wait to start")
			if st, b := e.Do("PATCH", "/v1/requests/"+id, ag, map[string]any{"title": "v2"}); st != http.StatusOK {
				t.Fatalf("patch: %d %s", st, b)
			}
			got := webtest.JSON(t, rawBody(t, early))
			if got["version"] != 2.0 {
				t.Fatalf("%v", got)
			}
			testkit.Recv(t, ev.ended, "the first wait to end")
			// These start at version 2 and must not be ended by it.
			cs := make([]net.Conn, 40)
			for i := range cs {
				cs[i] = rawWait(t, e, id, op, "60", "")
			}
			recvN(t, ev.started, len(cs), "the later waits to start")
			if st, _ := e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 2, "decision": "once"}); st != http.StatusOK {
				t.Fatalf("decide: %d", st)
			}
			for _, c := range cs {
				if got := webtest.JSON(t, rawBody(t, c)); got["version"] != 3.0 || got["status"] != "resolved" {
					t.Fatalf("%v", got)
				}
			}
			recvN(t, ev.ended, len(cs), "the later waits to end")
		})
	})
}
