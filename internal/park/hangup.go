package park

import (
	"net"
	"sync"
)

// hangups notices parked clients going away.
type hangups interface {
	// adopt is the form of a handed-over connection that watch can watch.
	adopt(conn net.Conn) parkedConn
	// watch calls gone once, when conn's peer closes or resets it; cancel
	// stops the watch, and conn must be closed right after it.
	watch(conn parkedConn, gone func()) (cancel func())
	close()
}

// readHangups notices a hangup with one goroutine per connection blocked in a
// one-byte read: the way for connections without a file descriptor to poll.
// Whatever the read returns ends the wait (data after the request is not
// expected).
type readHangups struct{}

func (readHangups) adopt(conn net.Conn) parkedConn { return connOnly{conn} }

// watch reads conn, which adopt made a connOnly.
func (readHangups) watch(pc parkedConn, gone func()) func() {
	conn := pc.(connOnly)
	var mu sync.Mutex
	cancelled := false
	go func() {
		var b [1]byte
		_, _ = conn.Read(b[:])
		mu.Lock()
		defer mu.Unlock()
		if !cancelled {
			gone()
		}
	}()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		cancelled = true
	}
}

func (readHangups) close() {}
