package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// feedPage is the most decisions one feed answer carries.
const feedPage = 100

// feedDecisions is a runtime's pull feed: the decisions on its requests after
// ?after=CURSOR, at once if there are any, else as soon as one commits, else an
// empty page after ?timeout=S. Asking for what follows N acknowledges N, so
// those forwards count as delivered.
func (s *Server) feedDecisions(c echo.Context) error {
	timeout, err := ParseTimeout(c)
	if err != nil {
		return err
	}
	after, err := parseFeedCursor(c.QueryParam("after"))
	if err != nil {
		return err
	}
	rt, err := s.ownRuntime(c, c.Param("id"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.runtimes.TouchRuntime(ctx, rt.ID); err != nil {
		return err
	}
	if err := s.runtimes.AckFeed(ctx, rt.ID, after); err != nil {
		return err
	}
	slot, err := s.AcquireWaiter(c)
	if err != nil {
		return err
	}
	defer slot.release()
	rows, err := s.waitFeed(c, rt.ID, after, timeout)
	if err != nil {
		return err
	}
	out := api.DecisionPage{Decisions: make([]api.Decision, len(rows)), Cursor: strconv.FormatInt(after, 10)}
	for i, f := range rows {
		cur := strconv.FormatInt(f.Seq, 10)
		out.Decisions[i] = api.Decision{RequestID: f.RequestID, Version: f.Version, Decision: f.Decision,
			Answer: f.Answer, Note: f.Note, DecidedDigest: f.DecidedDigest, DecidedVia: f.DecidedVia,
			DecidedAt: utcPtr(f.DecidedAt), Cursor: cur}
		out.Cursor = cur
	}
	return c.JSON(http.StatusOK, out)
}

// waitFeed returns the runtime's decisions after a cursor, waiting for one to
// commit when there are none. It watches the runtime's own key before each read,
// so a decision committed between the read and the wait still wakes it, another
// runtime's decision does not, and a resync (announcements may have been lost)
// does.
func (s *Server) waitFeed(c echo.Context, runtimeID string, after int64, timeout time.Duration) ([]store.Forward, error) {
	ctx := c.Request().Context()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for woken := false; ; woken = true {
		changed, stop := s.watch(models.RuntimeKey(runtimeID))
		rows, err := s.runtimes.DecisionFeed(ctx, runtimeID, after, feedPage)
		if err != nil || len(rows) > 0 {
			stop()
			return rows, err
		}
		if !woken && s.cfg.OnWaitStart != nil {
			s.cfg.OnWaitStart()
		}
		select {
		case <-changed:
			stop()
			if s.cfg.OnFeedWake != nil {
				s.cfg.OnFeedWake(runtimeID)
			}
			continue
		case <-timer.C:
		case <-ctx.Done():
		case <-s.closing:
		}
		stop()
		return nil, nil
	}
}

func parseFeedCursor(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, invalid("after must be a cursor this feed gave (a whole number)")
	}
	return n, nil
}
