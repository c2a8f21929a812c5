package web

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// Failed logins allowed per client address: a burst, then one per interval.
const (
	loginBurst    = 10
	loginInterval = 6 * time.Second
	maxLimiters   = 10000
)

const codeTooManyLogins = "too_many_logins"

// loginLimiter counts failed logins per client address.
type loginLimiter struct {
	mu   sync.Mutex
	byIP map[string]*rate.Limiter
}

func newLoginLimiter() *loginLimiter { return &loginLimiter{byIP: map[string]*rate.Limiter{}} }

func (l *loginLimiter) get(ip string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.byIP[ip]
	if lim == nil {
		if len(l.byIP) >= maxLimiters {
			// Forget addresses that have nothing against them; their limiter is full.
			for k, v := range l.byIP {
				if v.Tokens() >= loginBurst {
					delete(l.byIP, k)
				}
			}
		}
		lim = rate.NewLimiter(rate.Every(loginInterval), loginBurst)
		l.byIP[ip] = lim
	}
	return lim
}

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

// limitLogins refuses login attempts from an address with too many recent
// failures, and counts a failure when the login answers 401.
func (s *Server) limitLogins(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method == http.MethodGet && c.QueryParam("token") == "" {
			return next(c) // only showing the form
		}
		lim := s.pages.logins.get(clientIP(c))
		if lim.Tokens() < 1 {
			wait := time.Duration((1-lim.Tokens())*float64(loginInterval)) + time.Second
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())))
			if wantsHTML(c) {
				return s.renderLoginPage(c, http.StatusTooManyRequests, "Too many failed logins from your address. Try again in "+views.Span(wait)+".")
			}
			return models.Errorf(codeTooManyLogins, "too many failed logins; retry after %d seconds", int(wait.Seconds()))
		}
		err := next(c)
		if c.Response().Status == http.StatusUnauthorized || models.ErrorCode(err) == models.ECodeUnauthenticated {
			lim.Allow()
		}
		return err
	}
}

// renderLoginPage is the login form, with what went wrong.
func (s *Server) renderLoginPage(c echo.Context, status int, msg string) error {
	return render(c, status, views.LoginPage(views.Login{Page: views.Page{Title: "Log in", Assets: s.pages.assets}, Error: msg}))
}
