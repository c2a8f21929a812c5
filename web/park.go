package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// A parked wait is a request long-poll whose connection net/http has handed
// over (Hijack) once the request was read, authorised and found to need a
// wait. What is left per waiter is this struct, the connection, a timer and a
// watch: no goroutine, no net/http buffers, no handler stack. A shared epoll
// set (hangup_linux.go) notices a client going away. The answer is written as
// a plain HTTP/1.1 response with Connection: close. HTTP/2, TLS and any
// connection that cannot be handed over keep the ordinary path.

// parkWriteTimeout bounds writing a parked wait's answer.
const parkWriteTimeout = 10 * time.Second

// parker holds the parked waits of one server, so shutdown can answer them.
type parker struct {
	hup    hangups
	mu     sync.Mutex
	closed bool
	waits  map[*parkedWait]struct{}
	wg     sync.WaitGroup
}

func newParker() *parker {
	return &parker{hup: newHangups(), waits: map[*parkedWait]struct{}{}}
}

// add holds p; false once the server is closing.
func (pk *parker) add(p *parkedWait) bool {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	if pk.closed {
		return false
	}
	pk.waits[p] = struct{}{}
	pk.wg.Add(1)
	return true
}

func (pk *parker) remove(p *parkedWait) {
	pk.mu.Lock()
	_, ok := pk.waits[p]
	delete(pk.waits, p)
	pk.mu.Unlock()
	if ok {
		pk.wg.Done()
	}
}

// close answers every parked wait with its current record (timed_out: true
// unless it changed) and returns once all are written.
func (pk *parker) close() {
	pk.mu.Lock()
	pk.closed = true
	ws := make([]*parkedWait, 0, len(pk.waits))
	for p := range pk.waits {
		ws = append(ws, p)
	}
	pk.mu.Unlock()
	for _, p := range ws {
		go p.expire()
	}
	pk.wg.Wait()
	pk.hup.close()
}

// parking returns the server's parker, made at the first parked wait.
func (s *Server) parking() *parker {
	s.parkOnce.Do(func() { s.parked = newParker() })
	return s.parked
}

// canPark reports whether c's wait may be parked: plain HTTP/1.x with no body.
func (s *Server) canPark(c echo.Context) bool {
	r := c.Request()
	return !s.cfg.NoPark && r.ProtoMajor == 1 && r.TLS == nil && r.ContentLength == 0 && len(r.TransferEncoding) == 0
}

// parkedWait is one parked request wait.
type parkedWait struct {
	s       *Server
	id      string
	first   *models.Request // the record when the wait began
	release func()
	header  http.Header // set by middleware before the handler ran

	mu        sync.Mutex
	conn      net.Conn       // nil until parked
	early     *models.Change // a change that came before the wait was parked
	stopWatch func() bool
	cancelHup func()
	timer     *time.Timer
	finished  bool
}

// parkRequestWait parks c's wait on request id if it can. handled reports
// that it answered or parked the wait; then it owns release. Otherwise the
// caller waits the ordinary way and still owns release.
func (s *Server) parkRequestWait(c echo.Context, id string, timeout time.Duration, release func()) (handled bool, err error) {
	if !s.canPark(c) {
		return false, nil
	}
	p := &parkedWait{s: s, id: id, release: release}
	p.stopWatch = s.watcher.WatchFunc(id, p.changed) // before the read: no change is missed
	first, err := s.reads.get(c.Request().Context(), id)
	if err != nil {
		p.stopWatch()
		release()
		return true, err
	}
	if !first.Open() {
		p.stopWatch()
		release()
		return true, c.JSONBlob(http.StatusOK, encodeWaitAnswer(first, false))
	}
	p.first = first
	p.header = c.Response().Header().Clone()
	conn, _, err := http.NewResponseController(c.Response()).Hijack()
	if err != nil { // not a connection that can be handed over
		p.stopWatch()
		return false, nil
	}
	// net/http's read and write deadlines no longer apply: the wait ends at its
	// own timeout, when the client goes or at shutdown. Bytes pipelined after
	// the request are dropped: the answer closes the connection.
	_ = conn.SetDeadline(time.Time{})
	if s.cfg.OnWaitStart != nil {
		s.cfg.OnWaitStart()
	}
	pk := s.parking()
	p.mu.Lock()
	p.conn = conn
	if !pk.add(p) { // the server is stopping
		p.mu.Unlock()
		p.expire()
		return true, nil
	}
	p.cancelHup = pk.hup.watch(conn, func() { go p.gone() })
	p.timer = time.AfterFunc(timeout, p.expire)
	early := p.early
	p.mu.Unlock()
	if early != nil {
		go p.onChange(*early)
	}
	return true, nil
}

// changed is the watch callback; it runs on the announcer and must not block.
func (p *parkedWait) changed(ch models.Change) { go p.onChange(ch) }

// onChange answers from the record the change carries when the wait is done;
// otherwise (no record carried, or a change that does not end the wait) it
// watches again and reads, so nothing in between is missed.
func (p *parkedWait) onChange(ch models.Change) {
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return
	}
	if p.conn == nil {
		p.early = &ch
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	if r := recordOf(ch, p.id); r != nil && versionMoved(r, p.first) {
		p.finish(r, ch.Encoded(encodeWoken), false)
		return
	}
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return
	}
	p.stopWatch = p.s.watcher.WatchFunc(p.id, p.changed)
	p.mu.Unlock()
	r, err := p.read()
	if err != nil {
		p.fail(err)
		return
	}
	if versionMoved(r, p.first) {
		p.finish(r, encodeWaitAnswer(r, false), false)
	}
}

// expire answers with the current record: the timeout passed or the server
// stops.
func (p *parkedWait) expire() {
	r, err := p.read()
	if err != nil {
		p.fail(err)
		return
	}
	timedOut := !versionMoved(r, p.first)
	p.finish(r, encodeWaitAnswer(r, timedOut), timedOut)
}

// read is the current record; the read serves other waiters too, so it is
// bounded on its own rather than by any one caller.
func (p *parkedWait) read() (*models.Request, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.s.reads.get(ctx, p.id)
}

// fail answers a failed read as the API answers an internal error.
func (p *parkedWait) fail(err error) {
	slog.Error("internal error", "method", http.MethodGet, "route", "/v1/requests/:id/wait", "err", err)
	body, _ := json.Marshal(errorBody{Error: models.ECodeInternal, Detail: "internal error"})
	p.end(http.StatusInternalServerError, append(body, '\n'), true)
}

// gone ends the wait of a client that went away: nothing is written.
func (p *parkedWait) gone() { p.end(0, nil, true) }

// finish writes the answer r (encoded as body).
func (p *parkedWait) finish(r *models.Request, body []byte, timedOut bool) {
	if p.end(http.StatusOK, body, timedOut) {
		p.s.observeRelease(r, timedOut)
	}
}

// end finishes the wait once: it stops the watch, the timer and the hangup
// watch, writes status and body (none when status is 0), closes the
// connection and gives the waiter slot back. It reports whether this call
// finished it.
func (p *parkedWait) end(status int, body []byte, timedOut bool) bool {
	p.mu.Lock()
	if p.finished || p.conn == nil {
		p.mu.Unlock()
		return false
	}
	p.finished = true
	stopWatch, timer, cancelHup, conn := p.stopWatch, p.timer, p.cancelHup, p.conn
	p.mu.Unlock()
	stopWatch()
	if timer != nil {
		timer.Stop()
	}
	if cancelHup != nil {
		cancelHup()
	}
	if status != 0 {
		_ = conn.SetWriteDeadline(time.Now().Add(parkWriteTimeout))
		_, _ = conn.Write(httpResponse(status, p.header, body))
	}
	_ = conn.Close()
	p.s.parking().remove(p)
	p.release()
	return true
}

// httpResponse is an HTTP/1.1 response that closes the connection.
func httpResponse(status int, h http.Header, body []byte) []byte {
	b := make([]byte, 0, 256+len(body))
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\n"...)
	for k, vs := range h {
		switch k {
		case "Content-Type", "Content-Length", "Connection", "Date", "Transfer-Encoding":
			continue
		}
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nConnection: close\r\nDate: "...)
	b = time.Now().UTC().AppendFormat(b, http.TimeFormat)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}
