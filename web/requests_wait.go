package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/park"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// Wait bounds, in seconds.
const (
	MinWait     = 1
	MaxWait     = 300
	DefaultWait = 60
)

// ParseTimeout reads ?timeout=S (MinWait..MaxWait, default DefaultWait).
func ParseTimeout(c echo.Context) (time.Duration, error) {
	v := c.QueryParam("timeout")
	if v == "" {
		return DefaultWait * time.Second, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < MinWait || n > MaxWait {
		return 0, invalid("timeout must be a whole number of seconds from %d to %d", MinWait, MaxWait)
	}
	return time.Duration(n) * time.Second, nil
}

// encodeWaitAnswer is the JSON of a wait's answer, as c.JSON writes it (with
// its newline). It is the one place the wait answer is encoded: a woken wait
// shares one encoding per announcement (models.Change.Encoded).
func encodeWaitAnswer(r *models.Request, timedOut bool) []byte {
	b, err := json.Marshal(api.Wait{Request: toAPIRequest(r), TimedOut: timedOut})
	if err != nil { // the record's fields are plain strings, numbers and maps
		panic("encode wait answer: " + err.Error())
	}
	return append(b, '\n')
}

// encodeWoken is encodeWaitAnswer for a wait a change has answered.
func encodeWoken(r *models.Request) []byte { return encodeWaitAnswer(r, false) }

// versionMoved is a request wait's end: the request settled or changed.
func versionMoved(r, first *models.Request) bool { return !r.Open() || r.Version != first.Version }

// waitRequest answers at once when the request is not open, else as soon as it
// changes, else after the timeout with timed_out: true. It is woken by the
// change announcement, never by polling, and answers from the record the
// announcement carries. Over plain HTTP/1.1 the wait is parked
// (internal/park): net/http lets go of the connection while it waits.
func (s *Server) waitRequest(c echo.Context) error {
	timeout, err := ParseTimeout(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	// A parked wait watches before the read that authorises it, so that one
	// read is also the record the wait starts from.
	var pw *park.Wait
	if s.canPark(c) {
		pw = s.parked.Watch(id)
	}
	r, err := s.visibleRequest(c, id)
	if err != nil {
		pw.Cancel()
		return err
	}
	if !r.Open() { // settled: the answer needs no wait, and so no waiter slot
		pw.Cancel()
		return c.JSONBlob(http.StatusOK, encodeWaitAnswer(r, false))
	}
	slot, err := s.AcquireWaiter(c)
	if err != nil {
		pw.Cancel()
		return err
	}
	if pw.Park(c.Response(), r, timeout, park.Slot{Free: slot.free, Release: slot.release}) {
		return nil
	}
	defer slot.release()
	w, err := s.waitFor(c.Request().Context(), id, timeout, versionMoved)
	if err != nil {
		return err
	}
	s.observeRelease(w.r, w.timedOut)
	if body := w.woke.Encoded(encodeWoken); body != nil && !w.timedOut {
		return c.JSONBlob(http.StatusOK, body)
	}
	return c.JSONBlob(http.StatusOK, encodeWaitAnswer(w.r, w.timedOut))
}

// canPark reports whether c's wait may be parked: plain HTTP/1.x with no
// body, on a server that parks.
func (s *Server) canPark(c echo.Context) bool { return !s.cfg.NoPark && park.CanPark(c.Request()) }

// observeRelease records how long after its decision a woken wait answered.
func (s *Server) observeRelease(r *models.Request, timedOut bool) {
	if !timedOut && r.ResolvedAt != nil {
		s.metrics.release.Observe(time.Since(*r.ResolvedAt).Seconds())
	}
}

// WaitChange waits until done(current, first) holds for request id, the timeout
// passes (timedOut), the client goes away or the server stops (both answered as
// timedOut with the current record). It watches before each read, so no change
// between a read and the wait is missed.
func (s *Server) WaitChange(c echo.Context, id string, timeout time.Duration, done func(r, first *models.Request) bool) (r *models.Request, timedOut bool, err error) {
	return s.waitChange(c.Request().Context(), id, timeout, done)
}

// waitChange is WaitChange for any caller whose going away ends ctx (MCP).
func (s *Server) waitChange(ctx context.Context, id string, timeout time.Duration, done func(r, first *models.Request) bool) (r *models.Request, timedOut bool, err error) {
	w, err := s.waitFor(ctx, id, timeout, done)
	return w.r, w.timedOut, err
}

// waited is how a wait ended: the record, whether it timed out, and the change
// whose carried record it is (zero when it was read).
type waited struct {
	r        *models.Request
	timedOut bool
	woke     models.Change
}

// waitFor is waitChange, also giving the change that answered it, so the
// caller can share that change's encoding.
func (s *Server) waitFor(ctx context.Context, id string, timeout time.Duration, done func(r, first *models.Request) bool) (waited, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var first, r *models.Request
	var err error
	for {
		changed, stop := s.watch(id)
		if r == nil { // the first time, or a change that carried no record
			if r, err = s.reads.get(ctx, id); err != nil {
				stop()
				return waited{}, err
			}
		}
		if first == nil {
			first = r
			if !r.Open() {
				stop()
				return waited{r: r}, nil
			}
			if s.cfg.OnWaitStart != nil {
				s.cfg.OnWaitStart()
			}
		} else if done(r, first) {
			stop()
			return waited{r: r}, nil
		}
		select {
		case ch := <-changed:
			stop()
			if r = recordOf(ch, id); r != nil && done(r, first) {
				return waited{r: r, woke: ch}, nil
			}
			// Not yet done, or no record carried: read after watching again,
			// so a change in between is not missed.
			r = nil
			continue
		case <-timer.C:
		case <-ctx.Done():
		case <-s.closing:
		}
		stop()
		if ctx.Err() != nil {
			return waited{r: r, timedOut: true}, nil // the client is gone; nothing will read this
		}
		if r, err = s.reads.get(ctx, id); err != nil {
			return waited{}, err
		}
		return waited{r: r, timedOut: !done(r, first)}, nil
	}
}
