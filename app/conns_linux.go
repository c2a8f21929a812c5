package app

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Detach gives the socket up as a descriptor of its own, out of Go's poller,
// for a parked long-poll (internal/park/fd_linux.go) to write and close with plain
// syscalls. The connection counts as open until done is called, once that
// descriptor is closed, so parked waits stay within the connection cap.
func (c *countedConn) Detach() (fd int, done func(), err error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return -1, nil, errors.ErrUnsupported
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, nil, err
	}
	dupErr := error(nil)
	if err := rc.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, nil, err
	}
	if dupErr != nil {
		return -1, nil, dupErr
	}
	_ = c.Conn.Close() // Go's poller lets go; the duplicate keeps the socket open
	return fd, func() { c.once.Do(func() { c.l.open.Add(-1) }) }, nil
}
