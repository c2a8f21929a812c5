package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gatehousehq/gatehouse/api"
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

// waitRequest answers at once when the request is not open, else as soon as it
// changes, else after the timeout with timed_out: true. It is woken by the
// change announcement, never by polling.
func (s *Server) waitRequest(c echo.Context) error {
	timeout, err := ParseTimeout(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	r, err := s.visibleRequest(c, id)
	if err != nil {
		return err
	}
	if !r.Open() { // settled: the answer needs no wait, and so no waiter slot
		return c.JSON(http.StatusOK, api.Wait{Request: toAPIRequest(r)})
	}
	release, err := s.AcquireWaiter(c)
	if err != nil {
		return err
	}
	defer release()
	r, timedOut, err := s.WaitChange(c, id, timeout, func(r *models.Request, first *models.Request) bool {
		return !r.Open() || r.Version != first.Version
	})
	if err != nil {
		return err
	}
	if !timedOut && r.ResolvedAt != nil {
		s.metrics.release.Observe(time.Since(*r.ResolvedAt).Seconds())
	}
	return c.JSON(http.StatusOK, api.Wait{Request: toAPIRequest(r), TimedOut: timedOut})
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
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var first *models.Request
	for {
		changed, stop := s.watcher.Watch(id)
		r, err = s.reads.get(ctx, id)
		if err != nil {
			stop()
			return nil, false, err
		}
		if first == nil {
			first = r
			if !r.Open() {
				stop()
				return r, false, nil
			}
			if s.cfg.OnWaitStart != nil {
				s.cfg.OnWaitStart()
			}
		} else if done(r, first) {
			stop()
			return r, false, nil
		}
		select {
		case <-changed:
			stop()
			continue
		case <-timer.C:
		case <-ctx.Done():
		case <-s.closing:
		}
		stop()
		if ctx.Err() != nil {
			return r, true, nil // the client is gone; nothing will read this
		}
		r, err = s.reads.get(ctx, id)
		if err != nil {
			return nil, false, err
		}
		return r, !done(r, first), nil
	}
}
