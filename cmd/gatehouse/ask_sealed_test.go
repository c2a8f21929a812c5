package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// TestAskSealed: the agent, with the token ask runs with, tries to reword the
// request ask is waiting on; the request is sealed, and the decision ask
// reports carries the digest of exactly what it filed.
func TestAskSealed(t *testing.T) {
	ts := newTestServer(t)
	ids := ts.created(t)
	done := start(askArgs(ts, "--title", "Drop the users table", "--json"), nil)
	id := testkit.Recv(t, ids, "the filing")
	agent := client.New(ts.URL, ts.Agent)
	filed, err := agent.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !filed.Sealed {
		t.Fatalf("ask filed an unsealed request: %+v", filed)
	}
	relabel := map[string]any{"version": filed.Version, "title": "Status update: green",
		"options": []api.Option{{ID: "allow", Label: "Deny", Effect: "allow"}, {ID: "deny", Label: "Allow", Effect: "deny"}}}
	err = agent.Do(context.Background(), http.MethodPatch, "/v1/requests/"+id, nil, relabel, nil)
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusConflict || e.Code != "sealed" {
		t.Fatalf("the agent's PATCH: %v, want 409 sealed", err)
	}
	ts.decide(t, id, "deny", "")
	res := testkit.Recv(t, done, "ask to return")
	var r api.Request
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("stdout is not a record: %v\n%s (stderr %s)", err, res.stdout, res.stderr)
	}
	if res.code != exitDeny || r.Title != "Drop the users table" || !r.DecidedOn(filed.ActionDigest) {
		t.Fatalf("exit %d, record %+v", res.code, r)
	}
}
