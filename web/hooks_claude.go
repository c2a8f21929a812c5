package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// Bounds of POST /v1/hooks/claude-code's ?timeout=, in seconds. The hook's own
// timeout in Claude Code's settings must be longer: Claude Code stops reading
// at its timeout, and then nothing tells it the wait ended in "ask".
const (
	HookMinWait     = 1
	HookMaxWait     = 600
	HookDefaultWait = 300
)

// hookWithdrawTimeout bounds the cancel of a request the hook stopped waiting
// for; it runs after the caller may have gone, so not on its context.
const hookWithdrawTimeout = 5 * time.Second

// answerClaudeCodeHook is Claude Code's "type": "http" hook: the body is the
// hook input, and the answer is what `gatehouse hook claude-code` prints, with
// the same filing, key, rules and fallbacks, and no process per tool call.
// Every path without a decision on exactly what was filed answers the fallback
// (PreToolUse "ask", or 204 for PermissionRequest), never an allow; an error
// it returns is answered so by hookFallback, which also read the body.
func (s *Server) answerClaudeCodeHook(c echo.Context) error {
	if done, err := s.claudeCodeSessionHook(c); done {
		return err
	}
	wait, err := parseHookTimeout(c)
	if err != nil {
		return err
	}
	in, err := readClaudeCodeHook(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := Principal(c)
	r, err := s.fileClaudeCodeHook(ctx, p, in, wait)
	if err != nil {
		return writeHookAnswer(c, in.Fallback(hookTrouble(ctx, "could not take the request", err)))
	}
	if !r.Open() { // a rule decided, or this very call was filed before
		return writeHookAnswer(c, in.Answer(apiOf(r)))
	}
	slot, err := s.takeWaitSlot(p)
	if err != nil {
		return s.giveUpHook(c, in, r.ID, hookTrouble(ctx, "could not wait", err))
	}
	w, err := s.waitFor(ctx, r.ID, wait, func(r, _ *models.Request) bool { return !r.Open() })
	slot.release()
	switch {
	case err != nil:
		return s.giveUpHook(c, in, r.ID, hookTrouble(ctx, "wait failed", err))
	case w.timedOut:
		return s.giveUpHook(c, in, r.ID, fmt.Sprintf("No decision in Gatehouse within %s; asking here instead", wait))
	}
	s.observeRelease(w.r, false)
	s.permissionMovedOn(ctx, p, in, w.r)
	return writeHookAnswer(c, in.Answer(apiOf(w.r)))
}

// parseHookTimeout reads ?timeout=S (HookMinWait..HookMaxWait, default
// HookDefaultWait).
func parseHookTimeout(c echo.Context) (time.Duration, error) {
	v := c.QueryParam("timeout")
	if v == "" {
		return HookDefaultWait * time.Second, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < HookMinWait || n > HookMaxWait {
		return 0, invalid("timeout must be a whole number of seconds from %d to %d, shorter than the hook's own timeout in Claude Code's settings", HookMinWait, HookMaxWait)
	}
	return time.Duration(n) * time.Second, nil
}

// readClaudeCodeHook reads the body (within the body limit, as bindJSON
// does) and parses it with the hook format's own parser: Claude Code's input
// has fields Gatehouse does not model, so decodeStrict's unknown-field rule
// cannot apply. What decodeStrict refuses in any body is refused here too:
// invalid UTF-8, a key twice under any case folding, trailing data.
func readClaudeCodeHook(c echo.Context) (*hookanswer.ClaudeCodeHookInput, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, err
	}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return nil, models.Errorf(codeInvalidJSON, "the body is empty; send Claude Code's hook input")
	case !utf8.Valid(body):
		return nil, models.Errorf(codeInvalidJSON, "the body holds invalid UTF-8; send UTF-8 text")
	case !json.Valid(body):
		return nil, models.Errorf(codeInvalidJSON, "the body is not one valid JSON value")
	}
	if err := uniqueKeys(body); err != nil {
		return nil, err
	}
	in, err := hookanswer.ParseClaudeCodeHook(bytes.NewReader(body))
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return nil, models.Errorf(codeInvalidJSON, "%s has the wrong JSON type for Claude Code's hook input", te.Field)
	case errors.As(err, &te):
		return nil, models.Errorf(codeInvalidJSON, "the body must be a JSON object: Claude Code's hook input")
	case err != nil:
		return nil, invalid("%s", err.Error())
	}
	return in, nil
}

// fileClaudeCodeHook files the hook's request under its idempotency key,
// through FileRequest so rules and metrics apply. A PermissionRequest (no
// tool_use_id) whose key names an earlier call's settled request is filed
// again under a key chained to that record: "Allow once" was for that call.
func (s *Server) fileClaudeCodeHook(ctx context.Context, p models.Principal, in *hookanswer.ClaudeCodeHookInput, wait time.Duration) (*models.Request, error) {
	if _, err := s.allowFiling(p); err != nil {
		return nil, err
	}
	n, err := toNewRequest(in.NewRequest(wait))
	if err != nil {
		return nil, err
	}
	r, err := hookanswer.FileFresh(in.IdempotencyKey(), in.ToolUseID != "", func(key string) (*models.Request, bool, error) {
		return s.FileRequest(ctx, p, n, key)
	}, func(r *models.Request) (bool, string) { return !r.Open(), r.ID })
	if errors.Is(err, hookanswer.ErrAllSettled) {
		return nil, models.Errorf(models.ECodeConflict, "%s", err.Error())
	}
	return r, err
}

// giveUpHook withdraws the request the hook stopped waiting for, as the
// command hook does, and answers the fallback; when a decision landed first,
// the cancel's conflict carries it and that decision is the answer.
func (s *Server) giveUpHook(c echo.Context, in *hookanswer.ClaudeCodeHookInput, id, reason string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), hookWithdrawTimeout)
	defer cancel()
	_, err := s.store.Withdraw(ctx, id, Principal(c), models.StatusCancelled)
	var de *models.Error
	if errors.As(err, &de) && de.Current != nil && de.Current.Status == models.StatusResolved {
		return writeHookAnswer(c, in.Answer(apiOf(de.Current)))
	}
	if err != nil && !errors.As(err, &de) {
		slog.Error("claude code hook: cancel", "request", id, "err", err)
	}
	return writeHookAnswer(c, in.Fallback(reason))
}

// hookTrouble is a fallback's reason in words: a domain error's detail, and
// nothing of an internal one (which is logged).
func hookTrouble(ctx context.Context, what string, err error) string {
	var de *models.Error
	if errors.As(err, &de) && de.Code != models.ECodeInternal {
		return fmt.Sprintf("Gatehouse %s (%s: %s); asking here instead", what, de.Code, de.Detail)
	}
	if ctx.Err() == nil {
		slog.Error("claude code hook", "what", what, "err", err)
	}
	return fmt.Sprintf("Gatehouse %s (internal error); asking here instead", what)
}

// writeHookAnswer answers the hook: its JSON, or for no answer at all (a
// PermissionRequest without a decision) 204, an empty 2xx that Claude Code
// reads as "no decision" and so shows its own prompt.
func writeHookAnswer(c echo.Context, out *hookanswer.ClaudeCodeHookOutput) error {
	if out == nil {
		return c.NoContent(http.StatusNoContent)
	}
	return c.JSON(http.StatusOK, out)
}

// apiOf is the record as the hook's answer functions read it.
func apiOf(r *models.Request) *api.Request {
	a := toAPIRequest(r)
	return &a
}
