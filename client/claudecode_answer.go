package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// maxRefile bounds how often a PermissionRequest is filed again when its key
// names a request that already ended (the same command twice in one prompt).
const maxRefile = 3

// AnswerClaudeCodeHook files the hook's permission request, waits up to wait
// for the operator and returns what the hook prints (nil: print nothing).
// It never allows without a decision: on any failure it returns the fallback
// (ask, or nothing) with the error that caused it, and cancels the request so
// the inbox shows no item nobody waits for.
func (c *Client) AnswerClaudeCodeHook(ctx context.Context, in *ClaudeCodeHookInput, wait time.Duration) (*ClaudeCodeHookOutput, error) {
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	key := in.IdempotencyKey()
	var r *Request
	for range maxRefile {
		var err error
		r, err = c.File(waitCtx, in.NewRequest(wait), key)
		if err != nil {
			return in.Fallback(fmt.Sprintf("Gatehouse could not take the request (%v); asking here instead", err)), err
		}
		if r.Status == "open" || in.keyedByCall() {
			break // a settled record keyed by this very tool call is its answer
		}
		// A settled record for another call with the same command: "Allow
		// once" was that call's, so ask again.
		key += ":" + r.ID
	}
	if r.Status != "open" {
		if r.Status == "resolved" && in.keyedByCall() {
			return in.Answer(r), nil
		}
		return in.Fallback("Gatehouse could not file a fresh request; asking here instead"), errors.New("every idempotent filing answered a settled request")
	}
	final, err := c.WaitSettled(waitCtx, r.ID)
	if err == nil {
		return in.Answer(final), nil
	}
	reason := fmt.Sprintf("Gatehouse wait failed (%v); asking here instead", err)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		reason = fmt.Sprintf("No decision in Gatehouse within %s; asking here instead", wait)
	case ctx.Err() != nil:
		reason = "The Gatehouse hook was stopped before a decision; asking here instead"
	}
	if decided := c.withdraw(r.ID); decided != nil {
		return in.Answer(decided), nil
	}
	return in.Fallback(reason), err
}

// withdraw cancels a request the hook stopped waiting for. When a decision
// landed first, it returns that record: the operator's answer still counts.
func (c *Client) withdraw(id string) *Request {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Cancel(ctx, id)
	var e *Error
	if asError(err, &e) && e.Request != nil && e.Request.Status == "resolved" {
		return e.Request
	}
	return nil
}
