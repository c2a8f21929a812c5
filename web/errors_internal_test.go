package web

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// A caller that hung up is not an internal error (it was logged as an ERROR
// "internal error" before); a cancelled context the caller did not cause is.
func TestClientGoneIsNotAnInternalError(t *testing.T) {
	e := echo.New()
	wrapped := fmt.Errorf("read request: %w", context.Canceled)
	t.Run("the caller gave up", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := e.NewContext(httptest.NewRequest("GET", "/v1/requests", nil).WithContext(ctx), httptest.NewRecorder())
		if !clientGone(c, wrapped) {
			t.Fatal("a cancelled caller's error counts as internal")
		}
	})
	t.Run("the caller is still there", func(t *testing.T) {
		c := e.NewContext(httptest.NewRequest("GET", "/v1/requests", nil), httptest.NewRecorder())
		if clientGone(c, wrapped) || clientGone(c, errors.New("disk full")) {
			t.Fatal("an error with the caller still there was taken for a hang-up")
		}
	})
}
