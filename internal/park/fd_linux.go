package park

import (
	"errors"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fdConn is a parked socket taken out of Go's poller: a parked wait needs no
// read deadline and no goroutine, and in the poller every answered client's
// ACK and close would wake the runtime. It costs a dup and a close when it
// parks; its answer is a write(2) and a close(2).
type fdConn struct {
	fd   int
	done func() // once the descriptor is closed
}

// detacher is a connection that gives its socket up as a descriptor of its
// own and still counts as open until done (app's counted connections).
type detacher interface {
	Detach() (fd int, done func(), err error)
}

// detach takes conn's socket out of Go's poller; nil when it cannot.
func detach(conn net.Conn) *fdConn {
	if d, ok := conn.(detacher); ok {
		fd, done, err := d.Detach()
		if err != nil {
			return nil
		}
		return &fdConn{fd: fd, done: done}
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	fd, err := dupSocket(sc)
	if err != nil {
		return nil
	}
	_ = conn.Close() // the duplicate keeps the socket open
	return &fdConn{fd: fd, done: func() {}}
}

// dupSocket duplicates the descriptor beneath sc (close-on-exec; the
// non-blocking flag belongs to the open socket, so the copy keeps it).
func dupSocket(sc syscall.Conn) (int, error) {
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, dupErr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	return fd, dupErr
}

func (c *fdConn) tryWrite(b []byte) int {
	n := 0
	for n < len(b) {
		m, err := unix.Write(c.fd, b[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return n
}

// finish hands the socket back to Go's poller for a write with a deadline: a
// slow client, which is rare.
func (c *fdConn) finish(b []byte) {
	f := os.NewFile(uintptr(c.fd), "parked")
	conn, err := net.FileConn(f) // a duplicate of its own
	_ = f.Close()
	c.done()
	if err != nil {
		return
	}
	connOnly{conn}.finish(b)
}

func (c *fdConn) close() {
	_ = unix.Close(c.fd)
	c.done()
}
