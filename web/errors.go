package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
)

// Codes that only the HTTP layer produces.
const (
	codeInvalidJSON    = "invalid_json"
	codeBodyTooLarge   = "body_too_large"
	codeTooManyWaiters = "too_many_waiters"
	codeRouteNotFound  = "route_not_found"
	codeMethod         = "method_not_allowed"
	codeShuttingDown   = "shutting_down"
	codeUnavailable    = "unavailable"
)

// unavailableRetry is the Retry-After, in seconds, of a 503 unavailable.
const unavailableRetry = "2"

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	models.ECodeInvalid:         http.StatusBadRequest,
	codeInvalidJSON:             http.StatusBadRequest,
	codeMediaType:               http.StatusUnsupportedMediaType,
	models.ECodeNotFound:        http.StatusNotFound,
	codeRouteNotFound:           http.StatusNotFound,
	codeMethod:                  http.StatusMethodNotAllowed,
	models.ECodeVersionConflict: http.StatusConflict,
	models.ECodeAlreadyDecided:  http.StatusConflict,
	models.ECodeNotOpen:         http.StatusConflict,
	models.ECodeNotDismissable:  http.StatusConflict,
	models.ECodeSealed:          http.StatusConflict,
	models.ECodeKeyReused:       http.StatusConflict,
	models.ECodeConflict:        http.StatusConflict,
	models.ECodeExpired:         http.StatusGone,
	models.ECodeNotOffered:      http.StatusUnprocessableEntity,
	models.ECodeAmbiguousChoice: http.StatusUnprocessableEntity,
	models.ECodeMisleading:      http.StatusBadRequest,
	models.ECodeUnauthenticated: http.StatusUnauthorized,
	models.ECodeForbidden:       http.StatusForbidden,
	codeBodyTooLarge:            http.StatusRequestEntityTooLarge,
	codeTooManyWaiters:          http.StatusTooManyRequests,
	codeFilingTooFast:           http.StatusTooManyRequests,
	codeTooManyLogins:           http.StatusTooManyRequests,
	codeShuttingDown:            http.StatusServiceUnavailable,
	codeUnavailable:             http.StatusServiceUnavailable,
	models.ECodeInternal:        http.StatusInternalServerError,
	models.ECodeNotApprover:     http.StatusForbidden,
	models.ECodeSelfApproval:    http.StatusForbidden,
	models.ECodeAlreadyVoted:    http.StatusConflict,
	models.ECodeNoteRequired:    http.StatusUnprocessableEntity,
	models.ECodeNotInBatch:      http.StatusUnprocessableEntity,
	models.ECodeNoGrant:         http.StatusNotFound,
	models.ECodeApprovalPending: http.StatusConflict,
	models.ECodeApprovalDenied:  http.StatusForbidden,
	models.ECodeApprovalExpired: http.StatusForbidden,
}

// handleError is Echo's HTTPErrorHandler: domain errors keep their code, Echo's
// own errors get one, and anything else is logged and shown as "internal error".
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	if clientGone(c, err) {
		// The caller hung up: nothing to answer and nothing wrong here.
		slog.Debug("client gone", "method", c.Request().Method, "route", c.Path())
		return
	}
	body := api.ErrorBody{Code: models.ECodeInternal, Detail: "internal error"}
	var de *models.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &de):
		body.Code, body.Detail = de.Code, de.Detail
		if de.Current != nil {
			cur := toAPIRequest(de.Current)
			body.Request = &cur
		}
	case errors.As(err, &he):
		body.Code, body.Detail = echoCode(he.Code), http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code < 500 {
			body.Detail = m
		}
		if he.Code >= 500 {
			slog.Error("http", "path", c.Path(), "err", err)
		}
	case store.Unavailable(err):
		// The database is down or restarting: a retry may succeed, as
		// /healthz's 503 says too; a 500 would tell the client not to retry.
		slog.Warn("database unavailable", "method", c.Request().Method, "route", c.Path(), "err", err)
		body.Code, body.Detail = codeUnavailable, "the database is unavailable; retry shortly"
	default:
		slog.Error("internal error", "method", c.Request().Method, "route", c.Path(), "err", err) // the pattern: a path may carry a device token
	}
	status, ok := statusOf[body.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if body.Code == models.ECodeInternal {
		body.Detail = "internal error"
	}
	if body.Code == codeUnavailable {
		c.Response().Header().Set("Retry-After", unavailableRetry)
	}
	if wantsHTML(c) && s.renderErrorPage(c, status, body) == nil {
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, body)
}

func echoCode(status int) string {
	switch status {
	case http.StatusNotFound:
		return codeRouteNotFound
	case http.StatusMethodNotAllowed:
		return codeMethod
	case http.StatusRequestEntityTooLarge:
		return codeBodyTooLarge
	case http.StatusUnauthorized:
		return models.ECodeUnauthenticated
	case http.StatusForbidden:
		return models.ECodeForbidden
	case http.StatusBadRequest:
		return models.ECodeInvalid
	case http.StatusServiceUnavailable:
		return codeUnavailable
	}
	return models.ECodeInternal
}

// wantsHTML reports whether the caller is a browser asking for a page.
func wantsHTML(c echo.Context) bool {
	accept := c.Request().Header.Get("Accept")
	return len(accept) >= 9 && accept[:9] == "text/html"
}

// invalid is a 400 invalid_input with a formatted detail.
func invalid(format string, args ...any) error {
	return models.Errorf(models.ECodeInvalid, format, args...)
}

// clientGone reports whether err is only the echo of a caller that gave up
// (its request's context ended), which is not an internal error.
func clientGone(c echo.Context, err error) bool {
	return c.Request().Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
