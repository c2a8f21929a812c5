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

// Option is one choice offered to the operator.
type Option struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Effect string `json:"effect,omitempty"`
	Saves  string `json:"saves,omitempty"` // what the option saves beyond this decision, shown on the card
}

// Actuation is what became of the forward to the runtime.
type Actuation struct {
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
}

// Request is the record as the server returns it.
type Request struct {
	ID            string            `json:"id"`
	Kind          string            `json:"kind"`
	Status        string            `json:"status"`
	Version       int               `json:"version"`
	Title         string            `json:"title"`
	Summary       string            `json:"summary"`
	Detail        string            `json:"detail"`
	Risk          string            `json:"risk"`
	Tool          string            `json:"tool,omitempty"`
	Command       string            `json:"command,omitempty"`
	Options       []Option          `json:"options"`
	AllowAnswer   bool              `json:"allow_answer"`
	DefaultOption *string           `json:"default_option"`
	Decision      *string           `json:"decision"`
	Answer        *string           `json:"answer"`
	Note          *string           `json:"note"`
	Source        string            `json:"source"`
	SourceRef     map[string]string `json:"source_ref"`
	RuntimeID     *string           `json:"runtime_id"`
	PendingID     *string           `json:"pending_id,omitempty"`
	CreatedBy     string            `json:"created_by"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	ExpiresAt     time.Time         `json:"expires_at"`
	ResolvedAt    *time.Time        `json:"resolved_at"`
	DecidedBy     *string           `json:"decided_by"`
	DecidedVia    *string           `json:"decided_via"`
	Actuation     Actuation         `json:"actuation"`
	TimedOut      bool              `json:"timed_out,omitempty"`
}

// Effect is the effect of the decision taken ("allow", "deny") or "".
func (r *Request) Effect() string {
	if r.Decision == nil {
		return ""
	}
	for _, o := range r.Options {
		if o.ID == *r.Decision {
			return o.Effect
		}
	}
	return ""
}

// NewRequest is what a filer sends.
type NewRequest struct {
	Kind          string            `json:"kind,omitempty"`
	Title         string            `json:"title"`
	Summary       string            `json:"summary,omitempty"`
	Detail        string            `json:"detail,omitempty"`
	Risk          string            `json:"risk,omitempty"`
	Tool          string            `json:"tool,omitempty"`
	Command       string            `json:"command,omitempty"`
	Options       []Option          `json:"options,omitempty"`
	AllowAnswer   bool              `json:"allow_answer,omitempty"`
	DefaultOption string            `json:"default_option,omitempty"`
	Source        string            `json:"source,omitempty"`
	SourceRef     map[string]string `json:"source_ref,omitempty"`
	RuntimeID     *string           `json:"runtime_id,omitempty"`
	ExpiresIn     int64             `json:"expires_in,omitempty"`
}

// Error is an error answer from the server.
type Error struct {
	Status     int      `json:"-"`
	Code       string   `json:"error"`
	Detail     string   `json:"detail"`
	Request    *Request `json:"request,omitempty"`
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("gatehouse: %d %s: %s", e.Status, e.Code, e.Detail)
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
		if json.Unmarshal(data, e) != nil || e.Code == "" {
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
func (c *Client) File(ctx context.Context, n NewRequest, idempotencyKey string) (*Request, error) {
	var h map[string]string
	if idempotencyKey != "" {
		h = map[string]string{"Idempotency-Key": idempotencyKey}
	}
	var r Request
	return &r, c.Do(ctx, http.MethodPost, "/v1/requests", h, n, &r)
}

// FileCreated is File that also says whether this call created the record
// (201) rather than an Idempotency-Key repeat answering an earlier one (200).
func (c *Client) FileCreated(ctx context.Context, n NewRequest, idempotencyKey string) (*Request, bool, error) {
	var h map[string]string
	if idempotencyKey != "" {
		h = map[string]string{"Idempotency-Key": idempotencyKey}
	}
	var r Request
	status, err := c.do(ctx, http.MethodPost, "/v1/requests", h, n, &r)
	return &r, status == http.StatusCreated, err
}

// Get reads one request.
func (c *Client) Get(ctx context.Context, id string) (*Request, error) {
	var r Request
	return &r, c.Do(ctx, http.MethodGet, "/v1/requests/"+url.PathEscape(id), nil, nil, &r)
}

// Wait long-polls once for up to timeout (rounded up to whole seconds,
// 1..300); r.TimedOut says whether it ran out.
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (*Request, error) {
	s := int((timeout + time.Second - 1) / time.Second)
	s = min(max(s, 1), 300)
	var r Request
	path := "/v1/requests/" + url.PathEscape(id) + "/wait?timeout=" + strconv.Itoa(s)
	return &r, c.Do(ctx, http.MethodGet, path, nil, nil, &r)
}

// WaitSettled re-issues the long-poll until the request is no longer open or
// ctx ends. A 429 is honoured by waiting its Retry-After. The last long-poll is
// cut by ctx's deadline, so the wait lasts the whole budget and no longer.
func (c *Client) WaitSettled(ctx context.Context, id string) (*Request, error) {
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
		r, err := c.Wait(ctx, id, timeout)
		var e *Error
		switch {
		case err == nil && r.Status != "open":
			return r, nil
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
func (c *Client) Cancel(ctx context.Context, id string) (*Request, error) {
	var r Request
	return &r, c.Do(ctx, http.MethodPost, "/v1/requests/"+url.PathEscape(id)+"/cancel", nil, struct{}{}, &r)
}

// Decide records an operator's decision on the version seen.
func (c *Client) Decide(ctx context.Context, id string, version int, decision, note string) (*Request, error) {
	in := map[string]any{"version": version, "decision": decision}
	if note != "" {
		in["note"] = note
	}
	var r Request
	return &r, c.Do(ctx, http.MethodPost, "/v1/requests/"+url.PathEscape(id)+"/decide", nil, in, &r)
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	if ok {
		*e = x
	}
	return ok
}
