package client

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// Availability reads the calling operator's away state and quiet hours.
func (c *Client) Availability(ctx context.Context) (*api.Availability, error) {
	var a api.Availability
	return &a, c.Do(ctx, http.MethodGet, "/v1/me/availability", nil, nil, &a)
}

// SetAway marks the calling operator away (until, when not nil) or back.
func (c *Client) SetAway(ctx context.Context, away bool, until *time.Time) (*api.Availability, error) {
	var a api.Availability
	return &a, c.Do(ctx, http.MethodPut, "/v1/me/away", nil, api.Away{Away: &away, Until: until}, &a)
}

// SetQuietHours sets the calling operator's quiet hours; nil clears them.
func (c *Client) SetQuietHours(ctx context.Context, q *api.QuietHours) (*api.Availability, error) {
	var a api.Availability
	if q == nil {
		return &a, c.Do(ctx, http.MethodDelete, "/v1/me/quiet-hours", nil, nil, &a)
	}
	return &a, c.Do(ctx, http.MethodPut, "/v1/me/quiet-hours", nil, q, &a)
}
