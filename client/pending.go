package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// This file is the client side of the request-bound grants (/v1/pending), used
// by `gatehouse gate`; the bodies are api's.

// Claim is the answer to POST /v1/pending/claim. Released says the grant was
// spent on this request: forward it once. Otherwise Code is the refusal
// (no_grant, approval_pending, approval_denied, approval_expired) and Refusal
// its body, written by Gatehouse for the agent.
type Claim struct {
	api.Claimed

	Status  int             `json:"-"`
	Code    string          `json:"-"`
	Refusal json.RawMessage `json:"-"`
}

// Claim refusals, as Claim.Code.
const (
	ClaimNoGrant         = "no_grant"
	ClaimApprovalPending = "approval_pending"
	ClaimApprovalDenied  = "approval_denied"
	ClaimApprovalExpired = "approval_expired"
)

// FilePending files a pending grant for the exact request t.
func (c *Client) FilePending(ctx context.Context, t api.NewPending) (*api.PendingFiled, error) {
	var out api.PendingFiled
	if _, _, err := c.pendingCall(ctx, http.MethodPost, "/v1/pending", t, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ClaimPending releases the approved grant bound to t, if any. A refusal is not
// an error: it comes back as Claim.Code with the agent-facing body.
func (c *Client) ClaimPending(ctx context.Context, t api.NewPending) (*Claim, error) {
	var out Claim
	status, body, err := c.pendingCall(ctx, http.MethodPost, "/v1/pending/claim", t, &out)
	var e *Error
	if errors.As(err, &e) && isClaimRefusal(e) {
		return &Claim{Status: status, Code: e.Code, Refusal: body}, nil
	}
	if err != nil {
		return nil, err
	}
	out.Status = status
	return &out, nil
}

func isClaimRefusal(e *Error) bool {
	switch e.Code {
	case ClaimNoGrant, ClaimApprovalPending, ClaimApprovalDenied, ClaimApprovalExpired:
		return true
	}
	return false
}

// GetPending reads one of the caller's grants.
func (c *Client) GetPending(ctx context.Context, id string) (*api.PendingWait, error) {
	var out api.PendingWait
	if _, _, err := c.pendingCall(ctx, http.MethodGet, "/v1/pending/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WaitPending long-polls one of the caller's grants for up to timeout (whole
// seconds, 1..300); TimedOut says nothing changed.
func (c *Client) WaitPending(ctx context.Context, id string, timeout time.Duration) (*api.PendingWait, error) {
	secs := min(max(int(timeout/time.Second), 1), 300)
	var out api.PendingWait
	path := "/v1/pending/" + url.PathEscape(id) + "/wait?timeout=" + strconv.Itoa(secs)
	if _, _, err := c.pendingCall(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// pendingCall is one JSON call that keeps the raw answer: a refusal's body is
// handed to the agent byte for byte. Errors are *Error for non-2xx answers.
func (c *Client) pendingCall(ctx context.Context, method, path string, in, out any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return 0, nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Code == "" {
			e.Code, e.Detail = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(data))
		}
		return resp.StatusCode, data, e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, data, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, data, nil
}
