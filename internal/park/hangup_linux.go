package park

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// hupGather is how long the loop lets hangups gather after handling some.
const hupGather = 2 * time.Millisecond

// epollHangups watches every parked connection's socket in one epoll set for
// the peer's close or reset (EPOLLRDHUP, EPOLLHUP), on one goroutine for all.
// Go's own poller keeps the socket too; an fd may sit in several epoll sets.
type epollHangups struct {
	epfd, wake int // the epoll set; an eventfd that stops the loop
	mu         sync.Mutex
	next       uint64            // tokens start at 1; 0 is the wake eventfd
	gone       map[uint64]func() // by token, so a reused fd number cannot fire another's
	once       sync.Once
	done       chan struct{}
}

func newHangups() hangups {
	h, err := newEpollHangups()
	if err != nil {
		slog.Warn("epoll unavailable; parked waits watch with a goroutine each", "err", err)
		return readHangups{}
	}
	return h
}

func newEpollHangups() (*epollHangups, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
		unix.Close(epfd)
		unix.Close(wake)
		return nil, err
	}
	h := &epollHangups{epfd: epfd, wake: wake, gone: map[uint64]func(){}, done: make(chan struct{})}
	go h.run()
	return h, nil
}

// adopt takes the socket out of Go's poller when it can (fdConn).
func (h *epollHangups) adopt(conn net.Conn) parkedConn {
	if fc := detach(conn); fc != nil {
		return fc
	}
	return connOnly{conn}
}

func (h *epollHangups) watch(pc parkedConn, gone func()) func() {
	control := func(f func(fd uintptr)) error { f(uintptr(pc.(*fdConn).fd)); return nil }
	if c, ok := pc.(connOnly); ok {
		sc, ok := c.Conn.(syscall.Conn)
		if !ok {
			return readHangups{}.watch(pc, gone)
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return readHangups{}.watch(pc, gone)
		}
		control = rc.Control
	}
	h.mu.Lock()
	h.next++
	tok := h.next
	h.gone[tok] = gone
	h.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(uint32(tok)), Pad: int32(uint32(tok >> 32))}
	var ctlErr error
	if err := control(func(fd uintptr) { ctlErr = unix.EpollCtl(h.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev) }); err != nil || ctlErr != nil {
		h.drop(tok)
		if _, ok := pc.(connOnly); ok {
			return readHangups{}.watch(pc, gone)
		}
		// A descriptor the set refuses is not expected; its wait still ends
		// at its timeout, an answer or shutdown.
		return func() {}
	}
	// Closing the socket takes it out of the epoll set (Go holds no duplicate
	// descriptor), so cancel, called before the close, only forgets the
	// token: a syscall less per answer. An event that still comes (an
	// answered client closing before the server does) finds no token and is
	// dropped.
	return func() { h.drop(tok) }
}

// drop forgets tok and reports whether it was still watched.
func (h *epollHangups) drop(tok uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.gone[tok]
	delete(h.gone, tok)
	return ok
}

func (h *epollHangups) run() {
	defer close(h.done)
	events := make([]unix.EpollEvent, 256)
	for {
		n, err := unix.EpollWait(h.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			slog.Error("epoll wait; parked waits no longer notice a client going away", "err", err)
			return
		}
		for _, ev := range events[:n] {
			tok := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if tok == 0 {
				return // close
			}
			h.mu.Lock()
			gone := h.gone[tok]
			delete(h.gone, tok)
			h.mu.Unlock()
			if gone != nil {
				gone() // must not block: it starts the wait's ending
			}
		}
		// Hangups are cleanup, not news: after a wake let the next ones
		// gather, so ten thousand answered clients closing at once wake this
		// loop a few hundred times, not once each. A lone hangup is still
		// handled at once.
		time.Sleep(hupGather)
	}
}

func (h *epollHangups) close() {
	h.once.Do(func() {
		var one = [8]byte{1}
		if _, err := unix.Write(h.wake, one[:]); err == nil {
			<-h.done
		}
		unix.Close(h.epfd)
		unix.Close(h.wake)
	})
}

// tryWrite writes what of b the socket takes at once, never waiting, and
// returns how much that was (0 when conn has no descriptor to write to).
func tryWrite(conn net.Conn, b []byte) int {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, err := unix.Write(int(fd), b[n:])
			if err != nil || m <= 0 {
				break
			}
			n += m
		}
		return true // never wait for the socket: the caller finishes on a goroutine
	})
	return n
}
