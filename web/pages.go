package web

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/static"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// pages is the operator's page: its assets, login limiter and live hub.
type pages struct {
	assets views.Assets
	hashes map[string]string
	logins *loginLimiter
	hub    *hub
}

// setupPages prepares the page (asset hashes, login limiter, the live hub on
// feed); its routes are in routes.go.
func (s *Server) setupPages(feed store.Subscriber) error {
	hashes, err := static.Hashes()
	if err != nil {
		return err
	}
	p := &pages{hashes: hashes, logins: newLoginLimiter()}
	asset := func(name string) string { return "/static/" + name + "?v=" + hashes[name] }
	p.assets = views.Assets{
		CSS: asset("app.css"), Manifest: asset("manifest.webmanifest"), Icon: asset("icons/icon.svg"),
		Favicon: asset("icons/favicon-32.png"), AppleIcon: asset("icons/apple-touch-icon.png"),
	}
	for _, sc := range static.Scripts() {
		p.assets.Scripts = append(p.assets.Scripts, asset(sc))
	}
	s.pages = p
	if feed != nil {
		p.hub = newHub(s, feed) // started by the first page that connects
	}
	return nil
}

// compressPages gzips a page's answer of 1 KB or more for a browser that takes
// gzip: the inbox's HTML shrinks to about a fifth. Only the page's own routes
// use it, so a stream (a long-poll, MCP, the websocket) is never buffered.
func compressPages() echo.MiddlewareFunc {
	return middleware.GzipWithConfig(middleware.GzipConfig{
		MinLength: 1024,
		Skipper:   func(c echo.Context) bool { return !acceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) },
	})
}

// requirePageOperator sends a browser without an operator session to the
// login form; other callers get the usual JSON errors.
func (s *Server) requirePageOperator(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, ok := principalOf(c)
		if !ok {
			if c.Request().Method == http.MethodGet {
				return c.Redirect(http.StatusSeeOther, "/login")
			}
			return models.Errorf(models.ECodeUnauthenticated, "your session ended: log in again")
		}
		if p.Role != models.RoleOperator {
			return models.Errorf(models.ECodeForbidden, "only an operator may use the page")
		}
		return next(c)
	}
}

// render writes a component in full or not at all: it renders into a buffer
// first, so a failed render never sends half a page.
func render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// pageOf is the layout's data for the caller.
func (s *Server) pageOf(c echo.Context, title, wsURL string) views.Page {
	pg := views.Page{Title: title, WSURL: wsURL, Assets: s.pages.assets}
	if p, ok := principalOf(c); ok {
		pg.Operator = p.Name
		if pg.Operator == "" {
			pg.Operator = p.Label()
		}
	}
	if sess, ok := SessionOf(c); ok {
		pg.CSRF = sess.CSRF
	}
	if n, err := s.store.CountOpen(c.Request().Context()); err == nil {
		pg.OpenCount = n
	}
	return pg
}

// isHTMX reports whether htmx sent the call (it swaps the answer in place).
func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// localPath keeps a "back" target on this site: a path, never a URL elsewhere.
// Browsers drop tabs and newlines and read a backslash as a slash, so
// "/\t/evil.example" and "/\\evil" are other sites; anything but a plain path
// goes home.
func localPath(p string) string {
	if !plainPath(p) {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !plainPath(u.Path) {
		return "/"
	}
	return p
}

// plainPath: one leading slash, no spaces, controls or backslashes (the path
// decoded as well, as a browser might: "/%09/evil.example").
func plainPath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsFunc(p, func(r rune) bool {
		return r < 0x21 || r == 0x7f || r == '\\' || (r >= 0x80 && r < 0xa0)
	})
}
