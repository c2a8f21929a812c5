package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// ChatLinker makes the one-time codes that link a chat identity to an
// operator (store.Store).
type ChatLinker interface {
	CreateChatLinkCode(ctx context.Context, p models.Principal) (string, time.Time, error)
}

// createChatLinkCode answers a new link code for the calling operator (201).
func createChatLinkCode(c echo.Context, cl ChatLinker) error {
	p := Principal(c)
	code, expires, err := cl.CreateChatLinkCode(c.Request().Context(), p)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, api.ChatLinkCode{Code: code, Operator: p.Name, ExpiresAt: expires.UTC()})
}
