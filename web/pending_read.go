package web

import (
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// getPending answers a grant's status.
func (s *Server) getPending(c echo.Context) error {
	g, r, err := s.visibleGrant(c, c.Param("pending_id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toPendingStatus(g, r))
}

// waitPending answers at once when the grant is decided, else when its request
// changes (the same announcement every wait uses), else after the timeout with
// timed_out: true.
func (s *Server) waitPending(c echo.Context) error {
	timeout, err := ParseTimeout(c)
	if err != nil {
		return err
	}
	g, r, err := s.visibleGrant(c, c.Param("pending_id"))
	if err != nil {
		return err
	}
	if st := toPendingStatus(g, r); st.Status != models.GrantPending {
		return c.JSON(http.StatusOK, api.PendingWait{PendingStatus: st})
	}
	slot, err := s.AcquireWaiter(c)
	if err != nil {
		return err
	}
	defer slot.release()
	r, timedOut, err := s.WaitChange(c, g.RequestID, timeout, func(r, _ *models.Request) bool { return !r.Open() })
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.PendingWait{PendingStatus: toPendingStatus(g, r), TimedOut: timedOut})
}
