package web

import (
	"errors"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/views"
	"github.com/labstack/echo/v4"
)

// renderErrorPage is how handleError answers a browser: a session that ended
// goes to the login form; anything else is a notice on a plain page.
func (s *Server) renderErrorPage(c echo.Context, status int, body api.ErrorBody) error {
	if status == http.StatusUnauthorized && c.Request().Method == http.MethodGet {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	n := views.Notice{Kind: "error", Title: http.StatusText(status), Text: body.Detail}
	return render(c, status, views.ErrorPage(s.pageOf(c, n.Title, ""), n))
}

// pageErrors answers an htmx call that failed (a stale CSRF token, an ended
// session) with a notice it can swap in, instead of a JSON body.
func (s *Server) pageErrors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || !isHTMX(c) || c.Response().Committed {
			return err
		}
		var de *models.Error
		if !errors.As(err, &de) {
			return err
		}
		status := statusOf[de.Code]
		if status == http.StatusUnauthorized {
			c.Response().Header().Set("HX-Redirect", "/login")
		}
		return render(c, status, views.NoticeView(views.Notice{Kind: "error", Title: http.StatusText(status), Text: de.Detail}, views.Ctx{}))
	}
}
