package codexbridge

import (
	"encoding/json"
	"errors"

	"github.com/gatehousehq/gatehouse/api"
)

// Approval is what the bridge files for an approval server-request and the
// result it would send Codex for each option (tests).
func Approval(method string, params json.RawMessage) (api.NewRequest, map[string]json.RawMessage, error) {
	a, ok, err := parseApproval(method, params)
	if !ok {
		return api.NewRequest{}, nil, ErrNotApproval
	}
	if err != nil {
		return api.NewRequest{}, nil, err
	}
	return a.request, a.results, nil
}

// ErrNotApproval: the method is not one the bridge files.
var ErrNotApproval = errors.New("not an approval request")

// IDKey is how the bridge keys a JSON-RPC id (tests).
var IDKey = idKey
