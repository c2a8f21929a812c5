package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
	gbytes "github.com/labstack/gommon/bytes"
)

// hookPrefix holds every hook route. An agent's CLI posts its hook input
// there and reads any status but 2xx as "go on without the hook", so nothing
// under it may answer anything but the hook's own answer.
const hookPrefix = "/v1/hooks/"

// hookFormat is what the fallback needs of one CLI's hook protocol.
type hookFormat struct {
	// noDecision is the answer that decides nothing for a body as it arrived
	// (whole, cut short at the limit, or not the hook's input at all); nil
	// answers 204, an empty 2xx.
	noDecision func(body []byte, reason string) any
}

// claudeCodeHook is Claude Code's "type": "http" hook protocol.
var claudeCodeHook = hookFormat{noDecision: func(body []byte, reason string) any {
	if out := hookanswer.ClaudeCodeNoDecision(hookanswer.ClaudeCodeEvent(body), reason); out != nil {
		return out
	}
	return nil
}}

// hookRoute registers a hook route: the only way one is added. Its format
// answers whatever is not a decision (hookFallback); New refuses to start
// with a route under hookPrefix that was added otherwise.
func (s *Server) hookRoute(path string, f hookFormat, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	if !strings.HasPrefix(path, hookPrefix) {
		panic("web: hook route " + path + " outside " + hookPrefix)
	}
	s.hooks[path] = f
	s.echo.POST(path, h, m...)
}

// checkHookRoutes refuses a route under hookPrefix that has no hook format:
// it would answer its errors with error statuses, which the CLI reads as
// "go on".
func (s *Server) checkHookRoutes() error {
	for _, r := range s.echo.Routes() {
		if strings.HasPrefix(r.Path, hookPrefix) {
			if _, ok := s.hooks[r.Path]; !ok {
				return fmt.Errorf("web: %s %s is under %s but not registered through hookRoute", r.Method, r.Path, hookPrefix)
			}
		}
	}
	return nil
}

// hookFallback runs before routing and around everything else (Echo's
// recovery, the body limit, authentication, the route's own checks and the
// error handler's statuses): on a hook route, every outcome that is not a
// 2xx becomes the hook's own "no decision" with a 2xx. It reads the body
// itself, within the body limit, so an input over the limit is still
// answered as its event wants.
func (s *Server) hookFallback(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := c.Request().URL.Path
		if !strings.HasPrefix(p, hookPrefix) {
			return next(c)
		}
		f, ok := s.hooks[p]
		if !ok {
			f = claudeCodeHook // no such hook route: still a hook's caller
		}
		return s.guardHook(c, f, next)
	}
}

func (s *Server) guardHook(c echo.Context, f hookFormat, next echo.HandlerFunc) error {
	req := c.Request()
	body, reason := readHookBody(req, s.bodyLimit)
	if reason != "" {
		return writeNoDecision(c, c.Response().Writer, f, body, reason)
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	w := &hookWriter{ResponseWriter: c.Response().Writer}
	c.Response().Writer = w
	err := next(c)
	c.Response().Writer = w.ResponseWriter
	switch {
	case w.refused != 0:
		return writeNoDecision(c, w.ResponseWriter, f, body, fmt.Sprintf("Gatehouse answered HTTP %d; asking here instead", w.refused))
	case err == nil:
		return nil
	case c.Response().Committed:
		// A 2xx hook answer went out and then something failed: the
		// answer stands.
		if !clientGone(c, err) {
			slog.Error("hook route after its answer", "route", c.Request().URL.Path, "err", err)
		}
		return nil
	case clientGone(c, err):
		return nil
	}
	return writeNoDecision(c, w.ResponseWriter, f, body, hookReason(err))
}

// readHookBody reads at most limit bytes of the body. A reason says why the
// body cannot be taken (over the limit, too slow, cut off); body is then
// what arrived, for the fallback to read the event from.
func readHookBody(req *http.Request, limit int64) (body []byte, reason string) {
	if req.Body == nil {
		return nil, ""
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return body, "the hook input did not reach Gatehouse in time; asking here instead"
	case err != nil:
		return body, "the hook input did not reach Gatehouse whole; asking here instead"
	case int64(len(body)) > limit:
		return body[:limit], fmt.Sprintf("the hook input is larger than Gatehouse takes (%d bytes); asking here instead", limit)
	}
	return body, ""
}

// hookReason is an error in words for the fallback's reason: a domain
// error's code and detail, and nothing of an internal one (which is logged).
func hookReason(err error) string {
	var de *models.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &de) && de.Code != models.ECodeInternal:
		return fmt.Sprintf("Gatehouse did not take this hook call (%s: %s); asking here instead", de.Code, de.Detail)
	case errors.As(err, &he) && he.Code < 500:
		return fmt.Sprintf("Gatehouse did not take this hook call (HTTP %d); asking here instead", he.Code)
	}
	slog.Error("hook route", "err", err)
	return "Gatehouse could not answer this hook call (internal error); asking here instead"
}

// writeNoDecision answers the hook's "no decision" on w, beneath anything a
// refused answer already set in Echo's response.
func writeNoDecision(c echo.Context, w http.ResponseWriter, f hookFormat, body []byte, reason string) error {
	out := f.noDecision(body, reason)
	res := c.Response()
	h := w.Header()
	h.Del("Retry-After")
	h.Del("Content-Length")
	if out == nil {
		h.Del("Content-Type")
		res.Status, res.Committed = http.StatusNoContent, true
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err // not reached: the answers are plain structs
	}
	h.Set("Content-Type", echo.MIMEApplicationJSON)
	res.Status, res.Committed = http.StatusOK, true
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

// hookWriter passes a 2xx answer through and holds back any other, which
// the fallback replaces.
type hookWriter struct {
	http.ResponseWriter
	refused int // the status held back; 0 while none
	wrote   bool
}

func (w *hookWriter) WriteHeader(code int) {
	if w.wrote || w.refused != 0 {
		return
	}
	if code < 200 || code > 299 {
		w.refused = code
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *hookWriter) Write(b []byte) (int, error) {
	if w.refused != 0 {
		return len(b), nil
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *hookWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// parseBodyLimit is the body limit in bytes, as Echo's BodyLimit reads it.
func parseBodyLimit(limit string) (int64, error) {
	n, err := gbytes.Parse(limit)
	if err != nil || n <= 0 {
		return 0, models.Errorf(models.ECodeInvalid, "body limit %q is not a size such as 64K", limit)
	}
	return n, nil
}
