package chat

import (
	"context"
	"errors"
	"time"
)

// surface is one chat service's outbound side: post a message, edit it.
type surface interface {
	post(ctx context.Context, d Destination, v view) (channel, ref string, err error)
	update(ctx context.Context, d Destination, channel, ref string, v view) error
}

// sendError classifies a failed send: retry after a pause the service named
// (RetryAfter), retry with backoff (neither set), or give up (Permanent).
type sendError struct {
	RetryAfter time.Duration
	Permanent  bool
	Msg        string
}

func (e *sendError) Error() string { return e.Msg }

// classify reads err as a sendError; anything else is retried with backoff.
func classify(err error) *sendError {
	var se *sendError
	if errors.As(err, &se) {
		return se
	}
	return &sendError{Msg: err.Error()}
}
