package client

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/retry"
)

// RegisterRuntime registers (or updates) the caller's runtime.
func (c *Client) RegisterRuntime(ctx context.Context, in api.RuntimeRegistration) (*api.Runtime, error) {
	var rt api.Runtime
	return &rt, c.Do(ctx, http.MethodPost, "/v1/runtimes", nil, in, &rt)
}

// Decisions long-polls a runtime's decision feed once for what comes after cursor.
func (c *Client) Decisions(ctx context.Context, runtimeID, after string, timeout time.Duration) (*api.DecisionPage, error) {
	s := min(max(int(timeout/time.Second), 1), 300)
	q := url.Values{"timeout": {strconv.Itoa(s)}}
	if after != "" {
		q.Set("after", after)
	}
	var p api.DecisionPage
	return &p, c.Do(ctx, http.MethodGet, "/v1/runtimes/"+url.PathEscape(runtimeID)+"/decisions?"+q.Encode(), nil, nil, &p)
}

// Keys fetches the server's signing keys from GET /v1/keys, ready for Handler.Keys.
func (c *Client) Keys(ctx context.Context) (map[string]ed25519.PublicKey, error) {
	var body api.Keys
	if err := c.Do(ctx, http.MethodGet, "/v1/keys", nil, nil, &body); err != nil {
		return nil, err
	}
	out := map[string]ed25519.PublicKey{}
	for _, k := range body.Keys {
		b, err := base64.StdEncoding.DecodeString(k.PublicKey)
		if err != nil || len(b) != ed25519.PublicKeySize || k.Algorithm != "ed25519" {
			return nil, fmt.Errorf("key %s is not an Ed25519 public key", k.KeyID)
		}
		out[k.KeyID] = ed25519.PublicKey(b)
	}
	return out, nil
}

// PullLoop receives a runtime's decisions by long-polling its feed, for runtimes
// that cannot take an inbound call. It hands each decision to Handle in order
// and saves the cursor after each, so a restarted runtime resumes where it left
// off and misses nothing. A decision whose Handle fails is offered again.
type PullLoop struct {
	Client    *Client
	RuntimeID string
	Handle    func(ctx context.Context, d api.Decision) error
	// LoadCursor returns the saved cursor ("" for the start); SaveCursor keeps one.
	// Both are optional: without them the loop starts at the beginning of the feed.
	LoadCursor func(ctx context.Context) (string, error)
	SaveCursor func(ctx context.Context, cursor string) error
	// Wait is each long-poll's timeout (default 60s); Backoff the first pause
	// after an error (default 1s, doubling to 30s).
	Wait    time.Duration
	Backoff time.Duration
}

// Run pulls until ctx ends; it returns ctx's error, or LoadCursor's.
func (l *PullLoop) Run(ctx context.Context) error {
	cursor := ""
	if l.LoadCursor != nil {
		var err error
		if cursor, err = l.LoadCursor(ctx); err != nil {
			return err
		}
	}
	wait := l.Wait
	if wait <= 0 {
		wait = 60 * time.Second
	}
	first := l.Backoff
	if first <= 0 {
		first = time.Second
	}
	pauses := retry.New(first, 30*time.Second)
	for {
		next, err := l.once(ctx, cursor, wait)
		if next != cursor && l.SaveCursor != nil {
			if serr := l.SaveCursor(ctx, next); serr != nil && err == nil {
				err = serr
			}
		}
		cursor = next
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			pauses.Reset()
			continue
		}
		pause := pauses.NextBackOff()
		if e, ok := err.(*Error); ok && e.RetryAfter > 0 {
			pause = max(pause, e.RetryAfter)
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// once takes one page and handles it, returning the cursor after the last
// decision handled.
func (l *PullLoop) once(ctx context.Context, cursor string, wait time.Duration) (string, error) {
	page, err := l.Client.Decisions(ctx, l.RuntimeID, cursor, wait)
	if err != nil {
		return cursor, err
	}
	for _, d := range page.Decisions {
		if err := l.Handle(ctx, d); err != nil {
			return cursor, err
		}
		cursor = d.Cursor
	}
	if len(page.Decisions) == 0 && page.Cursor != "" {
		cursor = page.Cursor
	}
	return cursor, nil
}
