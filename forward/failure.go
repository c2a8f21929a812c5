package forward

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
)

// noRedirects keeps a forward at the callback the runtime registered: a 3xx
// is a failed attempt, never a second request (a 307 would re-send the signed
// body, a 302 would become a GET, to wherever the runtime points).
func noRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}

// errCallback is a failure of the runtime's own making (no callback_url, one
// that does not parse); its text is ours and safe to show.
type errCallback string

func (e errCallback) Error() string { return string(e) }

// failure is what a runtime or operator may read of a failed attempt. It is
// generic on purpose: a dial error ("connection refused" vs "no route") would
// make the forwarder a port scanner for whoever registers a callback. The real
// error goes to the server log only.
func failure(row string, status int, err error) string {
	if err == nil {
		if status/100 == 3 {
			return "redirect refused"
		}
		return "HTTP " + strconv.Itoa(status)
	}
	var own errCallback
	if errors.As(err, &own) {
		return own.Error()
	}
	slog.Warn("forward: attempt failed", "request", row, "err", err)
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return "timeout"
	}
	return "connection failed"
}
