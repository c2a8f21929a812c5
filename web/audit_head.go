package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// getAuditHead answers every chain's newest link signed with the server's key.
func (s *Server) getAuditHead(c echo.Context) error {
	h, err := s.audit.AuditHead(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h)
}
