package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
)

// AnswerClaudeCodeHook files the hook's permission request, waits up to wait
// for the operator and returns what the hook prints (nil: print nothing).
// It never allows without a decision: on any failure it returns the fallback
// (ask, or nothing) with the error that caused it, and cancels the request so
// the inbox shows no item nobody waits for.
func (c *Client) AnswerClaudeCodeHook(ctx context.Context, in *hookanswer.ClaudeCodeHookInput, wait time.Duration) (*hookanswer.ClaudeCodeHookOutput, error) {
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	r, err := c.fileHookRequest(waitCtx, in, wait)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// In words: "context deadline exceeded" tells the person nothing.
			err = fmt.Errorf("gatehouse did not take the request within %s; asking in Claude Code instead", wait)
			return in.Fallback(fmt.Sprintf("Gatehouse did not take the request within %s; asking here instead", wait)), err
		}
		return in.Fallback(fmt.Sprintf("Gatehouse could not take the request (%v); asking here instead", err)), err
	}
	if r.Status != "open" {
		// A rule decided at once, or this very tool call was filed before.
		return in.Answer(r), nil
	}
	final, err := c.WaitSettled(waitCtx, r.ID)
	if err == nil {
		return in.Answer(final), nil
	}
	reason := fmt.Sprintf("Gatehouse wait failed (%v); asking here instead", err)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// The error too is in words: the hook prints it on stderr.
		reason = fmt.Sprintf("No decision in Gatehouse within %s; asking here instead", wait)
		err = fmt.Errorf("no decision within %s; asking in Claude Code instead", wait)
	case ctx.Err() != nil:
		reason = "The Gatehouse hook was stopped before a decision; asking here instead"
		err = errors.New("stopped before a decision; asking in Claude Code instead")
	}
	if decided := c.withdraw(r.ID); decided != nil {
		return in.Answer(decided), nil
	}
	return in.Fallback(reason), err
}

// fileHookRequest files the hook's request under its idempotency key. A
// record that key already named, settled, for another call (the same command
// twice in one prompt, told apart only by tool_use_id, which PermissionRequest
// lacks) is not this call's answer: "Allow once" was for that call, so the
// request is filed again under a key chained to the old record.
func (c *Client) fileHookRequest(ctx context.Context, in *hookanswer.ClaudeCodeHookInput, wait time.Duration) (*api.Request, error) {
	return hookanswer.FileFresh(in.IdempotencyKey(), in.KeyedByCall(), func(key string) (*api.Request, bool, error) {
		return c.FileCreated(ctx, in.NewRequest(wait), key)
	}, settledAPI)
}

// withdraw cancels a request the hook stopped waiting for. When a decision
// landed first, it returns that record: the operator's answer still counts.
func (c *Client) withdraw(id string) *api.Request {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Cancel(ctx, id)
	var e *Error
	if asError(err, &e) && e.Request != nil && e.Request.Status == "resolved" {
		return e.Request
	}
	return nil
}

// settledAPI is FileFresh's settled for the API's record.
func settledAPI(r *api.Request) (bool, string) { return r.Status != "open", r.ID }
