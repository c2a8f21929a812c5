package client

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
)

// SessionEvent records what one of the caller's sessions did.
func (c *Client) SessionEvent(ctx context.Context, e api.SessionEvent) (*api.SessionEventAnswer, error) {
	var out api.SessionEventAnswer
	return &out, c.Do(ctx, http.MethodPost, "/v1/agent-sessions/events", nil, e, &out)
}
