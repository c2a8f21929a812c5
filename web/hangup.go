package web

import (
	"net"
	"sync"
)

// hangups notices parked clients going away.
type hangups interface {
	// watch calls gone once, when conn's peer closes or resets it; cancel
	// stops the watch, and conn must be closed right after it.
	watch(conn net.Conn, gone func()) (cancel func())
	close()
}

// readHangups notices a hangup with one goroutine per connection blocked in a
// one-byte read: the way for connections without a file descriptor to poll.
// Whatever the read returns ends the wait (data after the request is not
// expected).
type readHangups struct{}

func (readHangups) watch(conn net.Conn, gone func()) func() {
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
