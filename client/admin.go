package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gatehousehq/gatehouse/api"
)

// The calls below need an operator's token: they are how the CLI administers
// a server without its database file.

// CreateToken makes a token; the answer's Secret is shown this once.
func (c *Client) CreateToken(ctx context.Context, n api.NewToken) (*api.CreatedToken, error) {
	var t api.CreatedToken
	return &t, c.Do(ctx, http.MethodPost, "/v1/tokens", nil, n, &t)
}

// ListTokens lists every token, revoked ones included.
func (c *Client) ListTokens(ctx context.Context) ([]api.Token, error) {
	var out api.Tokens
	return out.Tokens, c.Do(ctx, http.MethodGet, "/v1/tokens", nil, nil, &out)
}

// RevokeToken revokes the live tokens with this id or name and answers how many.
func (c *Client) RevokeToken(ctx context.Context, idOrName string) (int64, error) {
	var out api.RevokedTokens
	return out.Revoked, c.Do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(idOrName), nil, nil, &out)
}

// ListSessions lists the live page sessions.
func (c *Client) ListSessions(ctx context.Context) ([]api.Session, error) {
	var out api.Sessions
	return out.Sessions, c.Do(ctx, http.MethodGet, "/v1/sessions", nil, nil, &out)
}

// EndSession ends one page session by id.
func (c *Client) EndSession(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/sessions/"+url.PathEscape(id), nil, nil, nil)
}

// Audit reads up to limit entries of one chain after seq.
func (c *Client) Audit(ctx context.Context, chain uint32, after uint64, limit int) (*api.AuditPage, error) {
	var p api.AuditPage
	path := "/v1/audit?chain=" + strconv.FormatUint(uint64(chain), 10) + "&after=" + strconv.FormatUint(after, 10) + "&limit=" + strconv.Itoa(limit)
	return &p, c.Do(ctx, http.MethodGet, path, nil, nil, &p)
}

// AuditHead reads every chain's newest link, signed by the server.
func (c *Client) AuditHead(ctx context.Context) (*api.AuditHead, error) {
	var h api.AuditHead
	return &h, c.Do(ctx, http.MethodGet, "/v1/audit/head", nil, nil, &h)
}

// Rules reads the rules in force.
func (c *Client) Rules(ctx context.Context) (*api.Rules, error) {
	var r api.Rules
	return &r, c.Do(ctx, http.MethodGet, "/v1/rules", nil, nil, &r)
}
