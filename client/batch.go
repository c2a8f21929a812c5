package client

import (
	"context"
	"net/http"

	"github.com/gatehousehq/gatehouse/api"
)

// DecideBatch sends 1 to 100 decisions at once (operator): each is taken on
// its own on the version given, and the answer has one result per decision in
// the same order, each with the status a single Decide would have had. An
// error means the batch as a whole was refused and nothing was decided.
func (c *Client) DecideBatch(ctx context.Context, decisions []api.BatchDecision) (*api.BatchAnswer, error) {
	var out api.BatchAnswer
	return &out, c.Do(ctx, http.MethodPost, "/v1/decisions", nil, api.Batch{Decisions: decisions}, &out)
}
