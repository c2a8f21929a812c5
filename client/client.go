// Package client is a Go client for Gatehouse's HTTP API, for the CLI, the hook
// and any program that files requests and waits for a person.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// Client calls one Gatehouse server with one token.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// New returns a client for the server at baseURL.
func New(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{}}
}

// Error is an error answer from the server: its status, the body
// (Code, Detail, and Request on a conflict), and the Retry-After of a 429.
type Error struct {
	Status int
	api.ErrorBody
	RetryAfter time.Duration
}

// Error has no "gatehouse:" prefix: the program that prints it names itself
// ("gatehouse ask: 401 …"), and a second name reads as a doubled prefix.
func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail)
}

// Do sends one JSON call and decodes a 2xx answer into out.
func (c *Client) Do(ctx context.Context, method, path string, headers map[string]string, in, out any) error {
	_, err := c.do(ctx, method, path, headers, in, out)
	return err
}

// do is Do that also returns the 2xx status.
func (c *Client) do(ctx context.Context, method, path string, headers map[string]string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(data, &e.ErrorBody) != nil || e.Code == "" {
			e.Code, e.Detail = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(data))
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return 0, e
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(data, out)
	}
	return resp.StatusCode, nil
}

// File files a request. A non-empty idempotency key makes a retry safe.
func (c *Client) File(ctx context.Context, n api.NewRequest, idempotencyKey string) (*api.Request, error) {
	r, _, err := c.FileCreated(ctx, n, idempotencyKey)
	return r, err
}

// FileCreated is File that also says whether this call created the record
// (201) rather than an Idempotency-Key repeat answering an earlier one (200).
func (c *Client) FileCreated(ctx context.Context, n api.NewRequest, idempotencyKey string) (*api.Request, bool, error) {
	var h map[string]string
	if idempotencyKey != "" {
		h = map[string]string{"Idempotency-Key": idempotencyKey}
	}
	var r api.Request
	status, err := c.do(ctx, http.MethodPost, "/v1/requests", h, n, &r)
	if err == nil && !n.FiledAs(&r) {
		// Not the record this filing makes: whatever decides it decides
		// something else, so no answer of it may count here.
		return nil, false, &Error{ErrorBody: api.ErrorBody{Code: CodeNotAsFiled,
			Detail: "the server answered request " + r.ID + ", whose action digest is not this filing's"}}
	}
	return &r, status == http.StatusCreated, err
}

// CodeNotAsFiled is the code of the error File returns when the record
// answered is not the one the filing describes.
const CodeNotAsFiled = "not_as_filed"

// Get reads one request.
func (c *Client) Get(ctx context.Context, id string) (*api.Request, error) {
	var r api.Request
	return &r, c.Do(ctx, http.MethodGet, "/v1/requests/"+url.PathEscape(id), nil, nil, &r)
}

// Wait long-polls once for up to timeout (rounded up to whole seconds,
// 1..300); w.TimedOut says whether it ran out.
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (*api.Wait, error) {
	s := int((timeout + time.Second - 1) / time.Second)
	s = min(max(s, 1), 300)
	var w api.Wait
	path := "/v1/requests/" + url.PathEscape(id) + "/wait?timeout=" + strconv.Itoa(s)
	return &w, c.Do(ctx, http.MethodGet, path, nil, nil, &w)
}

// WaitSettled re-issues the long-poll until the request is no longer open or
// ctx ends. A 429 is honoured by waiting its Retry-After. The last long-poll is
// cut by ctx's deadline, so the wait lasts the whole budget and no longer.
func (c *Client) WaitSettled(ctx context.Context, id string) (*api.Request, error) {
	for {
		timeout := 60 * time.Second
		if dl, ok := ctx.Deadline(); ok {
			timeout = min(timeout, time.Until(dl))
		}
		if timeout <= 0 {
			// One last read, past ctx's deadline but bounded, reports the state.
			gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			r, err := c.Get(gctx, id)
			cancel()
			if err == nil && r.Status == "open" {
				return r, context.DeadlineExceeded
			}
			return r, err
		}
		w, err := c.Wait(ctx, id, timeout)
		var e *Error
		switch {
		case err == nil && w.Status != "open":
			return &w.Request, nil
		case err == nil:
			continue
		case asError(err, &e) && e.Status == http.StatusTooManyRequests:
			select {
			case <-time.After(max(e.RetryAfter, time.Second)):
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		default:
			return nil, err
		}
	}
}

// Cancel withdraws an open request the caller filed.
func (c *Client) Cancel(ctx context.Context, id string) (*api.Request, error) {
	var r api.Request
	return &r, c.Do(ctx, http.MethodPost, "/v1/requests/"+url.PathEscape(id)+"/cancel", nil, struct{}{}, &r)
}

// CancelWithReason withdraws an open request the caller filed, saying why:
// the record keeps the reason as its note, and the audit entry shows it.
func (c *Client) CancelWithReason(ctx context.Context, id, reason string) (*api.Request, error) {
	var r api.Request
	return &r, c.Do(ctx, http.MethodPost, "/v1/requests/"+url.PathEscape(id)+"/cancel", nil, api.Cancel{Reason: &reason}, &r)
}

// Decide records an operator's decision on the version seen.
func (c *Client) Decide(ctx context.Context, id string, version int, decision, note string) (*api.Request, error) {
	in := api.Decide{Version: &version, Decision: &decision}
	if note != "" {
		in.Note = &note
	}
	var r api.Request
	return &r, c.Do(ctx, http.MethodPost, "/v1/requests/"+url.PathEscape(id)+"/decide", nil, in, &r)
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	if ok {
		*e = x
	}
	return ok
}
