package web

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/gatehousehq/gatehouse/internal/phase"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// SessionCookie is the name of the page's session cookie.
const SessionCookie = "gatehouse_session"

const (
	ctxPrincipal = "principal"
	ctxSession   = "session"
)

// authenticate resolves the caller from a bearer token or the session cookie.
// A cookie-authenticated call that changes state must carry the session's CSRF
// token (header X-CSRF-Token or the form body's field csrf, never the URL
// query, which leaks into logs and Referer headers). It does not reject anonymous
// callers; requireRoles does.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		phase.Mark(phase.Received)
		ctx := c.Request().Context()
		if h := c.Request().Header.Get("Authorization"); h != "" {
			secret, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || secret == "" {
				return models.Errorf(models.ECodeUnauthenticated, "the Authorization header must be \"Bearer TOKEN\"")
			}
			t, err := s.store.Authenticate(ctx, strings.TrimSpace(secret))
			if err != nil {
				return err
			}
			c.Set(ctxPrincipal, t.Principal())
			phase.Mark(phase.Authenticated)
			return next(c)
		}
		if ck, err := c.Cookie(SessionCookie); err == nil && ck.Value != "" {
			sess, err := s.store.SessionFor(ctx, ck.Value)
			if err == nil {
				if changesState(c.Request().Method) && !validCSRF(c, sess.CSRF) {
					return models.Errorf(models.ECodeForbidden, "missing or wrong CSRF token: reload the page and try again")
				}
				c.Set(ctxPrincipal, sess.Principal())
				c.Set(ctxSession, sess)
			} else if models.ErrorCode(err) != models.ECodeUnauthenticated {
				return err
			}
		}
		return next(c)
	}
}

func changesState(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

func validCSRF(c echo.Context, want string) bool {
	got := c.Request().Header.Get("X-CSRF-Token")
	if got == "" {
		ct := c.Request().Header.Get("Content-Type")
		if strings.HasPrefix(ct, "application/x-www-form-urlencoded") || strings.HasPrefix(ct, "multipart/form-data") {
			got = c.Request().PostFormValue("csrf")
		}
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// requireRoles admits only authenticated callers with one of roles.
func requireRoles(roles ...string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, ok := principalOf(c)
			if !ok {
				return models.Errorf(models.ECodeUnauthenticated, "send Authorization: Bearer TOKEN (create one with `gatehouse token create`)")
			}
			for _, r := range roles {
				if p.Role == r {
					return next(c)
				}
			}
			return models.Errorf(models.ECodeForbidden, "the %s role may not use this route", p.Role)
		}
	}
}

func principalOf(c echo.Context) (models.Principal, bool) {
	p, ok := c.Get(ctxPrincipal).(models.Principal)
	return p, ok
}

// Principal returns the authenticated caller; routes behind requireRoles always have one.
func Principal(c echo.Context) models.Principal {
	p, _ := principalOf(c)
	return p
}

// SessionOf returns the page session of a cookie-authenticated call.
func SessionOf(c echo.Context) (*models.Session, bool) {
	s, ok := c.Get(ctxSession).(*models.Session)
	return s, ok
}

// via says how a decision arrived: the page (cookie) or the API (bearer).
func via(c echo.Context) string {
	if _, ok := SessionOf(c); ok {
		return models.ViaPage
	}
	return models.ViaAPI
}

// canSee reports whether p may see r: operators see all, others their own.
// Anyone else gets not_found, never forbidden: waiting is not authorization.
func canSee(p models.Principal, r *models.Request) bool {
	return p.Role == models.RoleOperator || r.OwnerID == p.ID
}

// visibleRequest loads a request the caller may see, or answers not_found.
func (s *Server) visibleRequest(c echo.Context, id string) (*models.Request, error) {
	r, err := s.store.GetRequest(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if !canSee(Principal(c), r) {
		return nil, models.Errorf(models.ECodeNotFound, "no request %s", id)
	}
	return r, nil
}
