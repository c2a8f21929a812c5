package web

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

const codeTooManyLogins = "too_many_logins"

// clientIPExtractor finds the client a login counts against. Without trusted
// proxies it is the socket's address: a client could name any address in a
// forwarded header and so escape the limit. Behind --trusted-proxies it is
// the nearest address in X-Forwarded-For that is not one of them, so one
// client behind the proxy does not lock everyone out.
func clientIPExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

func clientIP(c echo.Context) string { return c.RealIP() }

// limitLogins refuses, before the store is asked, a credential that has
// failed too often: it was wrong each time, and a secret that is wrong stays
// wrong. Everything else reaches the login handlers, which answer a wrong
// credential with refuseLogin; a right one logs in whatever its address did.
func (s *Server) limitLogins(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodGet && c.QueryParam("token") == "" {
			return next(c) // only showing the form
		}
		if wait, over := s.pages.logins.creds.over(loginCredential(c)); over {
			return s.tooManyLogins(c, wait)
		}
		return next(c)
	}
}

// refuseLogin answers a login whose credential was wrong: 401 with msg, or 429
// once the client's address or the credential itself has failed too often. The
// failure counts against both.
func (s *Server) refuseLogin(c echo.Context, msg string) error {
	l, addr, cred := s.pages.logins, clientIP(c), loginCredential(c)
	addrOK, credOK := l.addrs.fail(addr), l.creds.fail(cred)
	if addrOK && credOK {
		return s.renderLoginPage(c, http.StatusUnauthorized, msg)
	}
	a, _ := l.addrs.over(addr)
	b, _ := l.creds.over(cred)
	return s.tooManyLogins(c, max(a, b, time.Second))
}

// tooManyLogins is the 429 of a throttled login, as a page or as JSON.
func (s *Server) tooManyLogins(c echo.Context, wait time.Duration) error {
	c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())))
	if wantsHTML(c) {
		return s.renderLoginPage(c, http.StatusTooManyRequests, "Too many failed logins. A right token still logs in; try another in "+views.Span(wait)+".")
	}
	return models.Errorf(codeTooManyLogins, "too many failed logins; a right token still logs in; retry a wrong one after %d seconds", int(wait.Seconds()))
}

// renderLoginPage is the login form, with what went wrong.
func (s *Server) renderLoginPage(c echo.Context, status int, msg string) error {
	return render(c, status, views.LoginPage(views.Login{Page: views.Page{Title: "Log in", Assets: s.pages.assets}, Error: msg}))
}
