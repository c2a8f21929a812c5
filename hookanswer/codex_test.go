package hookanswer_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
)

func TestCodexDecision(t *testing.T) {
	once, deny := "once", "deny"
	opts := []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
	filed := &api.Request{ID: "req_1", Status: "open", Title: "Run git push", Options: opts}
	filed.ActionDigest = api.ActionDigest(filed)
	bound, other := filed.ActionDigest, api.ActionDigest(&api.Request{Title: "Read the README", Options: opts})
	for _, c := range []struct {
		name  string
		final *api.Request
		want  string
	}{
		{"allowed", &api.Request{ID: "req_1", Status: "resolved", Decision: &once, Options: opts, DecidedDigest: &bound}, "allow"},
		{"denied", &api.Request{ID: "req_1", Status: "resolved", Decision: &deny, Options: opts, DecidedDigest: &bound}, "deny"},
		{"allowed on an edited version", &api.Request{ID: "req_1", Status: "resolved", Decision: &once, Options: opts, DecidedDigest: &other}, ""},
		{"allowed with no decided_digest", &api.Request{ID: "req_1", Status: "resolved", Decision: &once, Options: opts}, ""},
		{"expired", &api.Request{ID: "req_1", Status: "expired", Options: opts}, ""},
		{"cancelled", &api.Request{ID: "req_1", Status: "cancelled", Options: opts}, ""},
		{"dismissed", &api.Request{ID: "req_1", Status: "dismissed", Options: opts}, ""},
		{"still open", filed, ""},
		{"another request's allow", &api.Request{ID: "req_2", Status: "resolved", Decision: &once, Options: opts}, ""},
		{"an option that is not offered", &api.Request{ID: "req_1", Status: "resolved", Decision: new(string), Options: opts}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := hookanswer.CodexDecision(filed, c.final); got != c.want {
				t.Fatalf("CodexDecision = %q, want %q", got, c.want)
			}
		})
	}
}
