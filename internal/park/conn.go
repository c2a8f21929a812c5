package park

import (
	"net"
	"time"
)

// parkedConn is a parked wait's connection as its hangups watcher adopted it
// (hangups.adopt): the socket as a descriptor of its own, out of Go's poller
// (Linux, fdConn), or the net.Conn itself (connOnly).
type parkedConn interface {
	// tryWrite writes what of b the socket takes at once, never waiting, and
	// returns how much that was.
	tryWrite(b []byte) int
	// finish writes b, bounded by parkWriteTimeout, and closes the connection.
	finish(b []byte)
	close()
}

// connOnly is a parked connection kept as net/http handed it over.
type connOnly struct{ net.Conn }

func (c connOnly) tryWrite(b []byte) int { return tryWrite(c.Conn, b) }

func (c connOnly) finish(b []byte) {
	_ = c.SetWriteDeadline(time.Now().Add(parkWriteTimeout))
	_, _ = c.Write(b)
	_ = c.Close()
}

func (c connOnly) close() { _ = c.Close() }
