package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gatehousehq/gatehouse/api"
)

// ListRemembered lists the remembered allows, newest first (operator).
func (c *Client) ListRemembered(ctx context.Context) ([]api.Remembered, error) {
	var out api.RememberedList
	return out.Remembered, c.Do(ctx, http.MethodGet, "/v1/remembered", nil, nil, &out)
}

// RevokeRemembered ends a remembered allow at once and answers it (operator).
func (c *Client) RevokeRemembered(ctx context.Context, id string) (*api.Remembered, error) {
	var g api.Remembered
	return &g, c.Do(ctx, http.MethodDelete, "/v1/remembered/"+url.PathEscape(id), nil, nil, &g)
}
