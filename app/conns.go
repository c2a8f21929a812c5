package app

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func (c ConnConfig) withDefaults() ConnConfig {
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 60 * time.Second
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = 10 * time.Second
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = 30 * time.Second
	}
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = 64 << 10
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = 30000
	}
	return c
}

// httpServer is the service's http.Server with every connection bound: idle
// keep-alives close, headers and bodies must arrive in time. There is no
// ReadTimeout: it would also cut a long-poll, which has no body and waits for
// minutes; the body's deadline is set per request (bodyDeadline) instead.
func httpServer(h http.Handler, c ConnConfig) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(h, c.BodyTimeout),
		IdleTimeout:       c.IdleTimeout,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		MaxHeaderBytes:    c.MaxHeaderBytes,
	}
}

// bodyDeadline gives a request's body d to arrive, then lifts the deadline
// once the body is read to its end, so a handler that then waits (a
// long-poll, an MCP wait) is not cut. A request without a body has none.
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			h.ServeHTTP(w, r) // not a connection that has deadlines (a test recorder)
			return
		}
		r.Body = &liftAtEOF{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		h.ServeHTTP(w, r)
	})
}

// liftAtEOF calls lift once, when the body has been read to its end.
type liftAtEOF struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *liftAtEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.lift)
	}
	return n, err
}

// capListener holds at most max connections open. One over the cap is
// answered 503 at once and closed, rather than left queued in the kernel's
// backlog where it would look like a hung server (netutil.LimitListener
// queues).
type capListener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

// overCap is the whole answer to a connection over the cap.
const overCap = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 88\r\n\r\n" +
	`{"error":"too_many_connections","detail":"the server holds too many connections; retry"}`

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			go refuse(c)
			continue
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

// refuse answers a connection over the cap without reading it, within a
// second, and closes it.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(c, overCap)
	_ = c.Close()
}

type countedConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// SyscallConn exposes the socket beneath, so a parked long-poll (internal/park)
// still watches it from the shared epoll set instead of a goroutine of its own.
func (c *countedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// A parked wait type-asserts the hijacked connection to syscall.Conn.
var _ syscall.Conn = (*countedConn)(nil)
