package web_test

import (
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

// TestMCPSealedAndDigests: what an agent files through MCP is sealed (its own
// token cannot PATCH it), and the wait answer carries the digest the decision
// was made on, equal to the one request_approval answered.
func TestMCPSealedAndDigests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		env := newMCPEnvOn(t, dialect, web.Config{})
		cs := env.connect("a1", "")
		filed := out[api.Request](t, callTool(t, cs, "request_approval", map[string]any{"title": "Drop the users table"}))
		if !filed.Sealed || len(filed.ActionDigest) != 64 || filed.DecidedDigest != nil {
			t.Fatalf("request_approval answered %+v", filed)
		}
		t.Run("the agent's own PATCH is refused", func(t *testing.T) {
			status, body := env.Do(http.MethodPatch, "/v1/requests/"+filed.ID, env.tokens["a1"], map[string]any{"title": "Status update: green"})
			if status != http.StatusConflict {
				t.Fatalf("%d %s", status, body)
			}
			var eb api.ErrorBody
			decode(t, body, &eb)
			if eb.Code != "sealed" || eb.Request == nil || eb.Request.ActionDigest != filed.ActionDigest {
				t.Fatalf("%s", body)
			}
		})
		t.Run("the wait answer carries the decided digest", func(t *testing.T) {
			env.decide(filed.ID, "deny", "")
			w := out[mcpWaitResult](t, callTool(t, cs, "wait_for_decision", map[string]any{"id": filed.ID, "seconds": 1}))
			if !w.Decided || w.Request.ActionDigest != filed.ActionDigest || !w.Request.DecidedOn(filed.ActionDigest) {
				t.Fatalf("wait answered %+v", w.Request)
			}
		})
	})
}
