package web

import (
	"net/http"

	"github.com/gatehousehq/gatehouse/api/openapi"
	"github.com/labstack/echo/v4"
)

// serveOpenAPI answers the OpenAPI 3.1 document of the JSON API, generated
// from the wire types (package api) and this server's error table, for anyone.
func (s *Server) serveOpenAPI(c echo.Context) error {
	doc, err := openapi.Document(openapi.Server{BaseURL: s.BaseURL(), ErrorStatus: statusOf, SessionCookie: SessionCookie})
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, doc)
}
