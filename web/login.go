package web

import (
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// LoginTicketTTL is how long the one-time login URL that serve prints works;
// it also stops working once any operator token exists.
const LoginTicketTTL = 15 * time.Minute

// loginLink spends the one-time ?token= of the URL serve printed, sets the
// session cookie and goes to the inbox. Without a token it shows the login form.
func (s *Server) loginLink(c echo.Context) error {
	ticket := c.QueryParam("token")
	if ticket == "" {
		return s.renderLoginPage(c, http.StatusOK, "")
	}
	sess, cookie, err := s.store.UseLoginTicket(c.Request().Context(), ticket)
	if err != nil {
		if models.ErrorCode(err) == models.ECodeUnauthenticated {
			return s.refuseLogin(c, "This login link is unknown, used or expired. Log in with an operator token.")
		}
		return err
	}
	if err := s.store.DescribeSession(c.Request().Context(), sess.ID, c.Request().UserAgent()); err != nil {
		return err
	}
	s.setSession(c, cookie)
	return c.Redirect(http.StatusSeeOther, "/")
}

// loginToken opens a session for an operator token posted in the form field
// "token".
func (s *Server) loginToken(c echo.Context) error {
	sess, cookie, err := s.store.LoginWithToken(c.Request().Context(), c.FormValue("token"))
	if err != nil {
		if models.ErrorCode(err) == models.ECodeUnauthenticated {
			return s.refuseLogin(c, "That is not a live operator token.")
		}
		return err
	}
	if err := s.store.DescribeSession(c.Request().Context(), sess.ID, c.Request().UserAgent()); err != nil {
		return err
	}
	s.setSession(c, cookie)
	return c.Redirect(http.StatusSeeOther, "/")
}

// logout ends the session.
func (s *Server) logout(c echo.Context) error {
	if ck, err := c.Cookie(SessionCookie); err == nil {
		if err := s.store.EndSession(c.Request().Context(), ck.Value); err != nil {
			return err
		}
	}
	c.SetCookie(&http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secureCookies(), SameSite: http.SameSiteLaxMode})
	return c.Redirect(http.StatusSeeOther, "/login")
}

func (s *Server) setSession(c echo.Context, cookie string) {
	c.SetCookie(&http.Cookie{
		Name: SessionCookie, Value: cookie, Path: "/", HttpOnly: true, Secure: s.secureCookies(),
		SameSite: http.SameSiteLaxMode, MaxAge: int(store.SessionTTL.Seconds()),
	})
}
