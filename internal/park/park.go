package park

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
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

// Config is what parking takes from the server whose waits it parks.
type Config struct {
	// Watcher gives each request's next change.
	Watcher Watcher
	// Read is request id's current record (the server's coalesced reads:
	// one read serves every wait woken together).
	Read func(ctx context.Context, id string) (*models.Request, error)
	// Answer is the body of a wait's answer, as the ordinary path writes it;
	// Woken is Answer(r, false), the one encoding a wait woken by a change
	// shares with every other receiver of it (models.Change.Encoded).
	Answer func(r *models.Request, timedOut bool) []byte
	Woken  func(r *models.Request) []byte
	// Released is told of every answer written, for the release metric.
	Released func(r *models.Request, timedOut bool)
	// Started, if set, is called once a wait is parked and its hangup
	// watched (a wait's start, as tests count it).
	Started func()
}

// Watcher wakes a parked wait at the next change of its request (a
// *models.Changes).
type Watcher interface {
	// WatchFunc calls f once, without blocking, with the next change of id;
	// stop cancels and reports whether f was still to be called.
	WatchFunc(id string, f func(models.Change)) (stop func() bool)
}

// Slot is the waiter slot a parked wait holds under the caller's caps.
type Slot struct {
	// Free gives the slot back; a second call does nothing. A parked wait
	// calls it before its answer goes out: a client that holds the answer
	// may wait again at once, and must not find its slot still taken.
	Free func()
	// Release gives the slot back (if Free has not) and reports the wait
	// over, once its connection is closed.
	Release func()
}

// Parker holds the parked waits of one server, so shutdown can answer them.
type Parker struct {
	cfg     Config
	hupOnce sync.Once
	hup     hangups // made at the first park (hangups)
	settle  *settler
	headers headerLines
	answers answerCache
	out     releases
	sets    waitSets
	mu      sync.Mutex
	closed  bool
	waits   map[*Wait]struct{}
	wg      sync.WaitGroup
}

// New is a Parker for one server's waits. It starts nothing: the epoll set
// and its goroutine come with the first park.
func New(cfg Config) *Parker {
	// A Watcher that can warm (store.Changes) encodes a waited-on decision's
	// answer while its commit's fsync runs, with the encoding deliver uses.
	if w, ok := cfg.Watcher.(interface{ WarmWith(func(models.Change)) }); ok && cfg.Woken != nil {
		w.WarmWith(func(ch models.Change) { ch.Encoded(cfg.Woken) })
	}
	return &Parker{cfg: cfg, settle: newSettler(), out: releases{max: runtime.GOMAXPROCS(0), woken: cfg.Woken}, sets: waitSets{sets: map[string]*waitSet{}}, waits: map[*Wait]struct{}{}}
}

// hangups is the parker's hangup watcher, made at the first park, so a
// server that never parks makes no epoll set.
func (pk *Parker) hangups() hangups {
	pk.hupOnce.Do(func() { pk.hup = newHangups() })
	return pk.hup
}

// add holds p; false once the server is closing.
func (pk *Parker) add(p *Wait) bool {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	if pk.closed {
		return false
	}
	pk.waits[p] = struct{}{}
	pk.wg.Add(1)
	pk.settle.parkedOne()
	return true
}

func (pk *Parker) remove(p *Wait) {
	pk.mu.Lock()
	_, ok := pk.waits[p]
	delete(pk.waits, p)
	pk.mu.Unlock()
	if ok {
		pk.wg.Done()
	}
}

// Close answers every parked wait with its current record (timed_out: true
// unless it changed) and returns once all are written; a wait parked later
// is answered at once.
func (pk *Parker) Close() {
	// A parker that never parked makes no epoll set, now or later.
	pk.hupOnce.Do(func() { pk.hup = readHangups{} })
	pk.mu.Lock()
	pk.closed = true
	ws := make([]*Wait, 0, len(pk.waits))
	for p := range pk.waits {
		ws = append(ws, p)
	}
	pk.mu.Unlock()
	for _, p := range ws {
		go p.expire()
	}
	pk.wg.Wait()
	pk.hup.close()
	pk.settle.stop()
}

// CanPark reports whether r's wait may be parked: plain HTTP/1.x with no body.
func CanPark(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.TLS == nil && r.ContentLength == 0 && len(r.TransferEncoding) == 0
}

// Wait is one parked request wait.
type Wait struct {
	pk      *Parker
	id      string
	version atomic.Int64 // the record's version when the wait began; set by Park while the watch is live
	held    Slot
	header  []byte // the header lines middleware set, shared (interned)

	mu        sync.Mutex
	conn      parkedConn     // nil until parked
	early     *models.Change // a change that came before the wait was parked
	set       *waitSet       // the watch it is in (Parker.sets' lock guards set and slot)
	slot      int
	cancelHup func()
	timer     *time.Timer
	finished  bool
}

// Watch starts a wait on request id that may be parked: it watches first,
// so the read that follows is the record the wait starts from and no change
// after it is missed. The caller then parks it or cancels it.
func (pk *Parker) Watch(id string) *Wait {
	p := &Wait{pk: pk, id: id}
	pk.join(p)
	return p
}

// Cancel drops a wait that will not be parked (nil: none).
func (p *Wait) Cancel() {
	if p != nil {
		p.pk.leave(p)
	}
}

// Park parks the wait on first (the record read after Watch, open) and
// reports whether it did; then it owns held, and answers on w's connection
// with w's header lines. When the connection cannot be handed over it
// cancels the watch and the caller waits the ordinary way.
func (p *Wait) Park(w http.ResponseWriter, first *models.Request, timeout time.Duration, held Slot) bool {
	if p == nil {
		return false
	}
	pk := p.pk
	p.version.Store(int64(first.Version))
	p.held = held
	p.header = pk.headers.intern(w.Header())
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil { // not a connection that can be handed over
		p.Cancel()
		return false
	}
	// net/http's read and write deadlines no longer apply: the wait ends at its
	// own timeout, when the client goes or at shutdown. Bytes pipelined after
	// the request are dropped: the answer closes the connection.
	_ = conn.SetDeadline(time.Time{})
	// A wait counts as started once it is parked (Parked counts it) and its
	// hangup is watched: tests that count starts then rely on both.
	started := func() {
		if pk.cfg.Started != nil {
			pk.cfg.Started()
		}
	}
	hup := pk.hangups()
	p.mu.Lock()
	p.conn = hup.adopt(conn)
	if !pk.add(p) { // the server is stopping
		p.mu.Unlock()
		started()
		p.expire()
		return true
	}
	p.cancelHup = hup.watch(p.conn, func() { go p.gone() })
	p.timer = time.AfterFunc(timeout, p.expire)
	early := p.early
	p.mu.Unlock()
	started()
	if early != nil {
		go p.onChange(*early)
	}
	return true
}

// moved reports whether r ends the wait: settled, or changed since it began.
func (p *Wait) moved(r *models.Request) bool {
	return !r.Open() || int64(r.Version) != p.version.Load()
}

// onChange answers from the record the change carries when the wait is done;
// otherwise (no record carried, or a change that does not end the wait) it
// watches again and reads, so nothing in between is missed.
func (p *Wait) onChange(ch models.Change) {
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
	if r := recordOf(ch, p.id); r != nil && p.moved(r) {
		p.finish(r, ch.Encoded(p.pk.cfg.Woken), false)
		return
	}
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return
	}
	p.pk.join(p)
	p.mu.Unlock()
	r, err := p.read()
	if err != nil {
		p.fail(err)
		return
	}
	if p.moved(r) {
		p.finish(r, p.pk.cfg.Answer(r, false), false)
	}
}

// recordOf is the committed record a change of request id carries, as the
// wait's own copy, or nil when it carries none and the wait must read it.
func recordOf(ch models.Change, id string) *models.Request {
	if ch.Record == nil || ch.RequestID != id {
		return nil
	}
	r := *ch.Record
	return &r
}

// expire answers with the current record: the timeout passed or the server
// stops.
func (p *Wait) expire() {
	r, err := p.read()
	if err != nil {
		p.fail(err)
		return
	}
	timedOut := !p.moved(r)
	p.finish(r, p.pk.cfg.Answer(r, timedOut), timedOut)
}

// read is the current record; the read serves other waiters too, so it is
// bounded on its own rather than by any one caller.
func (p *Wait) read() (*models.Request, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.pk.cfg.Read(ctx, p.id)
}

// fail answers a failed read as the API answers an internal error.
func (p *Wait) fail(err error) {
	slog.Error("internal error", "method", http.MethodGet, "route", "/v1/requests/:id/wait", "err", err)
	body, _ := json.Marshal(api.ErrorBody{Code: models.ECodeInternal, Detail: "internal error"})
	p.end(http.StatusInternalServerError, append(body, '\n'))
}

// gone ends the wait of a client that went away: nothing is written.
func (p *Wait) gone() { p.end(0, nil) }

// finish writes the answer r (encoded as body), off the announcer.
func (p *Wait) finish(r *models.Request, body []byte, timedOut bool) {
	if p.end(http.StatusOK, body) {
		p.pk.cfg.Released(r, timedOut)
	}
}

// end finishes the wait once: it writes status and body (none when status
// is 0) and closes the connection. It reports whether this call finished it.
func (p *Wait) end(status int, body []byte) bool {
	conn := p.claim()
	if conn == nil {
		return false
	}
	if status == 0 {
		p.close(conn)
		return true
	}
	if p.send(conn, httpResponse(status, p.header, body), false) {
		p.close(conn)
	}
	return true
}

// claim marks the wait finished, gives its waiter slot back (before the
// answer: see Slot.Free) and stops its watch, timer and hangup watch.
// It returns the connection, or nil when the wait was finished already or is
// not parked yet.
func (p *Wait) claim() parkedConn {
	p.mu.Lock()
	if p.finished || p.conn == nil {
		p.mu.Unlock()
		return nil
	}
	p.finished = true
	timer, cancelHup, conn := p.timer, p.cancelHup, p.conn
	p.mu.Unlock()
	p.held.Free()
	p.pk.leave(p)
	if timer != nil {
		timer.Stop()
	}
	if cancelHup != nil {
		cancelHup()
	}
	return conn
}

// send writes b to conn and reports whether it is all written, so the caller
// closes conn. The socket almost always takes an answer at once; only what it
// does not is written with a deadline, by send itself or, when inline (the
// caller must not block), on a goroutine; either way that write closes conn
// and send reports false.
func (p *Wait) send(conn parkedConn, b []byte, inline bool) bool {
	n := conn.tryWrite(b)
	if n == len(b) {
		return true
	}
	if inline {
		go p.write(conn, b[n:])
	} else {
		p.write(conn, b[n:])
	}
	return false
}

// write writes b to conn, bounded by parkWriteTimeout, and closes it.
func (p *Wait) write(conn parkedConn, b []byte) {
	conn.finish(b)
	p.closed()
}

// close closes the connection and ends the wait.
func (p *Wait) close(conn parkedConn) {
	conn.close()
	p.closed()
}

// closed ends a wait whose connection is closed: it is no longer parked,
// and then it is over (OnWaitEnd).
func (p *Wait) closed() {
	p.pk.remove(p)
	p.held.Release()
}

// headerLines interns the header lines of parked answers: every wait gets
// the same security headers, so they are kept once, not once per waiter.
type headerLines struct {
	mu   sync.Mutex
	last []byte
}

// intern renders h (less what the answer sets itself) as header lines and
// returns the shared copy when it is the same as the last.
func (hl *headerLines) intern(h http.Header) []byte {
	var buf bytes.Buffer
	_ = h.WriteSubset(&buf, map[string]bool{"Content-Type": true, "Content-Length": true, "Connection": true, "Date": true, "Transfer-Encoding": true})
	hl.mu.Lock()
	defer hl.mu.Unlock()
	if !bytes.Equal(buf.Bytes(), hl.last) {
		hl.last = bytes.Clone(buf.Bytes())
	}
	return hl.last
}

// httpResponse is an HTTP/1.1 response that closes the connection; header
// holds the other header lines.
func httpResponse(status int, header, body []byte) []byte {
	b := make([]byte, 0, 256+len(header)+len(body))
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "\r\n"...)
	b = append(b, header...)
	b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nConnection: close\r\nDate: "...)
	b = time.Now().UTC().AppendFormat(b, http.TimeFormat)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// Count is how many waits are parked.
func (pk *Parker) Count() int {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	return len(pk.waits)
}
