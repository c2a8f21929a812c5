package web

import (
	"context"
	"encoding/json"
	"time"

	"github.com/coder/websocket"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// wsFilter reads the page's selection from the socket's URL: ?id= for one
// request's page, else the inbox filter.
func wsFilter(c echo.Context) (views.Filter, error) {
	if id := c.QueryParam("id"); id != "" {
		return views.Filter{ID: id}, nil
	}
	return inboxFilter(c)
}

// connectPage is GET /ws: an operator's page, write-only from the server. The
// Origin must be exactly --base-url's (scheme, host and port; not merely the
// request's own Host, which the caller chooses), so another site cannot ride
// the operator's cookie.
func (s *Server) connectPage(c echo.Context) error {
	h := s.pages.hub
	if h == nil {
		return models.Errorf(codeUnavailable, "the live page is not available")
	}
	f, err := wsFilter(c)
	if err != nil {
		return err
	}
	if !sameOrigin(s.baseURL, c.Request()) {
		return models.Errorf(models.ECodeForbidden, "the Origin is not %s://%s", s.baseURL.Scheme, s.baseURL.Host)
	}
	if !h.start() {
		return models.Errorf(codeShuttingDown, "the server is stopping")
	}
	// Checked above, exactly; the library's check would admit any scheme.
	conn, err := websocket.Accept(c.Response(), c.Request(), &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return nil // Accept has answered (403 for a foreign Origin)
	}
	ctx, cancel := context.WithCancel(c.Request().Context())
	defer cancel()
	wctx, abort := context.WithCancel(ctx)
	defer abort()
	voter := Principal(c)
	pc := &pageConn{filter: f, agents: c.QueryParam("view") == "agents", operator: voter.Label(), voter: voter, send: make(chan []byte, pageQueue), dropped: make(chan struct{}), abort: abort}
	h.arrive(pc)
	defer h.depart(pc)

	// The page only ever says whether it is visible; reading also answers
	// pings and notices the page going away (which ends ctx).
	conn.SetReadLimit(1024)
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer cancel()
		s.readPage(ctx, conn, pc)
	}()
	defer func() {
		conn.CloseNow()
		<-read
	}()

	if !h.add(pc) {
		conn.Close(websocket.StatusServiceRestart, "server stopping")
		return nil
	}
	defer h.remove(pc)
	s.pumpPage(wctx, conn, pc)
	return nil
}

// readPage reads the page's visibility reports: {"visible": true|false}.
func (s *Server) readPage(ctx context.Context, conn *websocket.Conn, pc *pageConn) {
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			Visible *bool `json:"visible"`
		}
		if json.Unmarshal(b, &m) == nil && m.Visible != nil {
			s.pages.hub.setVisible(pc, *m.Visible)
			select { // the acknowledgement is a courtesy: never wait for a full queue
			case pc.send <- renderBytes(views.OOBPresence(*m.Visible)):
			default:
			}
		}
	}
}

// pumpPage writes the page's queue to its socket and pings it, until the page
// goes, is dropped as too slow, or the server stops. Close codes 1012 and 1013
// make the htmx websocket extension reconnect (and so resync); so does the
// abnormal close (1006) of a page dropped in the middle of a write.
func (s *Server) pumpPage(ctx context.Context, conn *websocket.Conn, pc *pageConn) {
	ping := time.NewTicker(wsPingEvery)
	defer ping.Stop()
	for {
		select {
		case msg := <-pc.send:
			msg = coalesce(msg, pc.send)
			wctx, cancel := context.WithTimeout(ctx, wsWriteTime)
			err := conn.Write(wctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				return
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, wsWriteTime)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		case <-pc.dropped:
			// Close gives a page that does not answer a few seconds, then hangs up.
			conn.Close(websocket.StatusTryAgainLater, "too slow: reconnect to resync")
			return
		case <-s.closing:
			conn.Close(websocket.StatusServiceRestart, "server stopping")
			return
		case <-ctx.Done():
			return
		}
	}
}

// coalesce joins what else is already queued into one message (fragments are
// independent OOB swaps, so one message may carry many): a burst of changes
// costs a page a few writes, not one per change. msg is shared between pages,
// so it is copied before it grows.
func coalesce(msg []byte, queue <-chan []byte) []byte {
	const max = 256 << 10
	for len(msg) < max {
		select {
		case m := <-queue:
			msg = append(msg[:len(msg):len(msg)], m...)
		default:
			return msg
		}
	}
	return msg
}
