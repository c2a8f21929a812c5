package park

import (
	"net/http"
	"sync"

	"github.com/gatehousehq/gatehouse/internal/phase"
	"github.com/gatehousehq/gatehouse/models"
)

// One decision can end ten thousand parked waits. Each costs a write and a
// close in the kernel (on loopback the write also delivers the segment to the
// peer), and a close costs as much again as the write, so the release
// workers write every answer first and close the connections after: every
// client holds its answer after one pass of writes, and the closes follow.
// An answer is the same bytes for every waiter of one announcement, and the
// waits go to the workers in slices of their set, so a release allocates
// nothing per waiter.

const (
	// inlineAnswers is how many parked waits one announcement answers on the
	// announcer's own goroutine (a write that cannot block: see send). One
	// waiter is woken without a goroutine hand-off, and ten thousand do not
	// hold the decide that woke them.
	inlineAnswers = 16
	// releaseBatch is how many waits a worker takes at once: one lock per
	// batch, and the other workers still get a share of a burst.
	releaseBatch = 64
	// unclosedMax bounds the written connections a worker holds before it
	// closes them, should answers keep coming; above the default cap of
	// waiters, so one decision's release is never split.
	unclosedMax = 1 << 15
)

// deliver gives ch to the waits of a set that fired, on the announcer. A
// change that carries its record is answered from it: the first few waits
// inline, the rest by the workers. Otherwise (a resync) each wait reads.
func (pk *Parker) deliver(waits []*Wait, ch models.Change) {
	if ch.Record == nil {
		for _, p := range waits {
			go p.onChange(ch)
		}
		return
	}
	n := min(len(waits), inlineAnswers)
	for _, p := range waits[:n] {
		if conn := p.woken(ch); conn != nil {
			answer := pk.answers.response(p.header, ch.Encoded(p.pk.cfg.Woken))
			phase.Mark(phase.WaiterReady)
			done := p.send(conn, answer, true)
			phase.Mark(phase.WaiterAnswered)
			p.pk.cfg.Released(ch.Record, false)
			if done {
				p.close(conn)
			}
		}
	}
	for rest := waits[n:]; len(rest) > 0; rest = rest[min(len(rest), releaseBatch):] {
		pk.out.add(release{waits: rest[:min(len(rest), releaseBatch)], ch: ch})
	}
}

// woken takes ch for p, a wait in a set that fired with ch (which carries its
// record). It returns the connection to answer on when ch ends the wait, and
// stops the wait's timer and hangup watch; otherwise nil: the wait is
// finished already, not parked yet (it keeps ch for park), or still open at
// its version (it watches again and reads, on a goroutine). Like claim, it
// gives the waiter slot back before the answer is written.
func (p *Wait) woken(ch models.Change) parkedConn {
	p.mu.Lock()
	switch {
	case p.finished:
		p.mu.Unlock()
		return nil
	case p.conn == nil:
		p.early = &ch
		p.mu.Unlock()
		return nil
	case !p.moved(ch.Record):
		p.mu.Unlock()
		go p.onChange(ch)
		return nil
	}
	p.finished = true
	timer, cancelHup, conn := p.timer, p.cancelHup, p.conn
	p.mu.Unlock()
	p.held.Free()
	if timer != nil { // nil while park answers a wait the stopping server refused
		timer.Stop()
	}
	if cancelHup != nil {
		cancelHup()
	}
	return conn
}

// release is a slice of a fired set's waits, to answer with ch.
type release struct {
	waits []*Wait
	ch    models.Change
}

// written is a parked wait whose answer is written and whose connection is
// still to close.
type written struct {
	p    *Wait
	conn parkedConn
}

// releases runs the parked answers of announcements on at most max
// goroutines, in order.
type releases struct {
	mu      sync.Mutex
	todo    []release
	running int
	max     int
	woken   func(*models.Request) []byte // Config.Woken
}

// add queues a slice of waits to answer; it never blocks (it runs on the
// announcer).
func (q *releases) add(a release) {
	q.mu.Lock()
	q.todo = append(q.todo, a)
	start := q.running < q.max
	if start {
		q.running++
	}
	q.mu.Unlock()
	if start {
		go q.work()
	}
}

// take returns the next slice to answer. When none is queued and the worker
// holds nothing to close (idle), the worker stops.
func (q *releases) take(idle bool) (a release, ok, stop bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.todo) == 0 {
		q.todo = nil // let a burst's backing array go
		if idle {
			q.running--
			return release{}, false, true
		}
		return release{}, false, false
	}
	a = q.todo[0]
	q.todo[0] = release{}
	q.todo = q.todo[1:]
	return a, true, false
}

func (q *releases) work() {
	var open []written
	var last struct{ header, body, resp []byte } // this worker's answer cache
	for {
		a, ok, stop := q.take(len(open) == 0)
		if stop {
			return
		}
		if ok {
			body := a.ch.Encoded(q.woken)
			for _, p := range a.waits {
				conn := p.woken(a.ch)
				if conn == nil {
					continue
				}
				if last.resp == nil || !sameSlice(p.header, last.header) || !sameSlice(body, last.body) {
					last.header, last.body, last.resp = p.header, body, httpResponse(http.StatusOK, p.header, body)
				}
				if p.send(conn, last.resp, true) { // a slow client gets a goroutine, not the worker
					open = append(open, written{p, conn})
				}
				p.pk.cfg.Released(a.ch.Record, false)
			}
		}
		if !ok || len(open) >= unclosedMax {
			for i, w := range open {
				w.p.close(w.conn)
				open[i] = written{}
			}
			open = open[:0]
		}
	}
}

// answerCache keeps the last whole answer built, so the waits of one
// announcement answered inline (the same header lines, the same encoded
// body) share it.
type answerCache struct {
	mu           sync.Mutex
	header, body []byte
	resp         []byte
}

// response is the 200 answer with header lines and body: the cached one when
// both are the very slices it was built from.
func (c *answerCache) response(header, body []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.resp == nil || !sameSlice(header, c.header) || !sameSlice(body, c.body) {
		c.header, c.body, c.resp = header, body, httpResponse(http.StatusOK, header, body)
	}
	return c.resp
}

// sameSlice reports whether a and b are the same bytes in memory.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
