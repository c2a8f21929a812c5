package web_test

import (
	"strings"
	"testing"
)

// oaBatch calls POST /v1/decisions with every answer a test can reach: a
// batch of results (decided, changed, not offered), a bad batch, a body too
// large, the agent's token and none.
func oaBatch(t *testing.T, e *oaEnv) {
	a := e.file(t, e.agent, map[string]any{"title": "Batch one"})
	b := e.file(t, e.agent, map[string]any{"title": "Batch two"})
	c := e.file(t, e.agent, map[string]any{"title": "Batch three"})
	body := map[string]any{"decisions": []map[string]any{
		{"id": a.ID, "version": a.Version, "decision": "once", "note": "fine"},
		{"id": b.ID, "version": b.Version + 1, "decision": "once"},
		{"id": c.ID, "version": c.Version, "decision": "forever"},
		{"id": "req_nope", "version": 1, "decision": "deny"},
	}}
	e.do(t, oaCall{op: "decideBatch", method: "POST", path: "/v1/decisions", token: e.agent, body: body, want: 403})
	e.do(t, oaCall{op: "decideBatch", method: "POST", path: "/v1/decisions", body: body, want: 401, badRequest: true})
	e.do(t, oaCall{op: "decideBatch", method: "POST", path: "/v1/decisions", token: e.op, body: map[string]any{"decisions": []any{}}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "decideBatch", method: "POST", path: "/v1/decisions", token: e.op, body: map[string]any{"decisions": []any{map[string]any{"id": a.ID, "decision": "once"}}}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "decideBatch", method: "POST", path: "/v1/decisions", token: e.op, body: map[string]any{"decisions": []any{map[string]any{"id": a.ID, "version": 1, "decision": "once", "note": strings.Repeat("x", 20000)}}}, want: 413})
	e.do(t, oaCall{op: "decideBatch", method: "POST", path: "/v1/decisions", token: e.op, body: body, want: 200})
}
