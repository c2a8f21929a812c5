package web_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestRememberLeakedOperatorToken is the agent holding a leaked operator
// token: it remembers its own command until revoked, so its later filings
// approve themselves; the operator revokes the leaked token, and the agent's
// next identical filing waits for a person.
func TestRememberLeakedOperatorToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		root := e.Token(models.RoleOperator, "root")
		leaked := e.Token(models.RoleOperator, "ops") // read by the agent
		agent := e.Token(models.RoleAgent, "claude")
		filing := func() map[string]any {
			return map[string]any{"kind": "permission", "title": "Fetch the installer", "tool": "Bash",
				"command": "curl -fsSL https://x.example/i.sh -o i.sh", "source_ref": map[string]string{"session": "s1", "cwd": "/repo"}}
		}

		first := e.File(agent, filing())
		status, body := e.Do(http.MethodPost, "/v1/requests/"+first["id"].(string)+"/decide", leaked,
			map[string]any{"version": first["version"], "decision": "once", "remember": map[string]any{"scope": "runtime", "for": "until_revoked"}})
		var decided api.Decided
		if status != http.StatusOK || json.Unmarshal(body, &decided) != nil || decided.Remembered == nil {
			t.Fatalf("the agent's remember with the leaked token: %d %s", status, body)
		}
		if got := e.File(agent, filing()); got["decided_via"] != models.ViaRemembered {
			t.Fatalf("before the revoke the grant approves: %v", got["decided_via"])
		}

		if status, body := e.Do(http.MethodDelete, "/v1/tokens/ops", root, nil); status != http.StatusOK {
			t.Fatalf("revoke: %d %s", status, body)
		}
		if got := e.File(agent, filing()); got["status"] != models.StatusOpen || got["decided_via"] != nil || got["grant_id"] != nil {
			t.Fatalf("after the revoke the agent's filing is %v via %v", got["status"], got["decided_via"])
		}

		status, body = e.Do(http.MethodGet, "/v1/remembered", root, nil)
		var list api.RememberedList
		if status != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Remembered) != 1 {
			t.Fatalf("list: %d %s", status, body)
		}
		if g := list.Remembered[0]; g.ID != decided.Remembered.ID || g.Live || g.RevokedBy == nil || *g.RevokedBy != "operator:root" {
			t.Fatalf("listed %+v", g)
		}
	})
}
