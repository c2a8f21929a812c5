package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
)

// AnswerCodexHook files the hook's permission request, waits up to wait for
// the operator and returns what the hook prints (nil: print nothing, so Codex
// asks in its own way). Every failure (server down, token refused, no
// decision in time, expiry, cancel) is nil with the error that caused it, and
// a request the hook stops waiting for is cancelled. Never an allow without
// an operator's (or an operator's rule's) allow.
func (c *Client) AnswerCodexHook(ctx context.Context, in *hookanswer.CodexHookInput, wait time.Duration) (*hookanswer.CodexHookOutput, error) {
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	filed, err := c.fileCodexRequest(waitCtx, in, wait)
	if err != nil {
		return nil, fmt.Errorf("gatehouse could not take the request: %w", err)
	}
	if filed.Status != "open" {
		// A rule decided at once, or this very tool call was filed before.
		return in.Answer(filed, filed), nil
	}
	final, err := c.WaitSettled(waitCtx, filed.ID)
	if err == nil {
		return in.Answer(filed, final), nil
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		err = fmt.Errorf("no decision in Gatehouse within %s", wait)
	case ctx.Err() != nil:
		err = errors.New("the hook was stopped before a decision")
	}
	if decided := c.withdraw(filed.ID); decided != nil {
		return in.Answer(filed, decided), nil
	}
	return nil, err
}

// fileCodexRequest files under the input's idempotency key. A key without a
// tool_use_id (PermissionRequest) that names a request already settled for an
// earlier call (the same command twice in one turn) is filed again under a
// key chained to the old record: "Allow once" was for that call.
func (c *Client) fileCodexRequest(ctx context.Context, in *hookanswer.CodexHookInput, wait time.Duration) (*api.Request, error) {
	return hookanswer.FileFresh(in.IdempotencyKey(), in.KeyedByCall(), func(key string) (*api.Request, bool, error) {
		return c.FileCreated(ctx, in.NewRequest(wait), key)
	}, settledAPI)
}
