package store

import (
	"database/sql/driver"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says the database cannot be reached now
// (refused, reset, shutting down or starting up) rather than that the call
// was wrong: the web layer answers 503 with Retry-After, as /healthz does,
// instead of a 500 that tells a client not to retry.
func Unavailable(err error) bool {
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	var ne net.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &ce), errors.Is(err, driver.ErrBadConn), errors.As(err, &ne):
		return true
	case errors.As(err, &pe):
		// Class 08 is "connection exception"; 57P01-57P03 are the server
		// shutting down or not yet accepting connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	return pgconn.SafeToRetry(err)
}
