package client_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
)

func TestDecidedOption(t *testing.T) {
	str := func(s string) *string { return &s }
	filed := &api.Request{ID: "r1", Status: "open", Title: "git push", ActionDigest: "digest-filed",
		Options: []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}}
	// settled is filed as it ends: resolved with decision on the version digest.
	settled := func(decision *string, digest string, edit func(*api.Request)) *api.Request {
		r := *filed
		r.Status, r.Decision, r.DecidedDigest = "resolved", decision, &digest
		if edit != nil {
			edit(&r)
		}
		return &r
	}
	cases := []struct {
		name         string
		filed, final *api.Request
		want         string
	}{
		{"an allow decided on what was filed", filed, settled(str("once"), "digest-filed", nil), "once"},
		{"a deny decided on what was filed", filed, settled(str("deny"), "digest-filed", nil), "deny"},
		{"nothing filed", nil, settled(str("once"), "digest-filed", nil), ""},
		{"nothing settled", filed, nil, ""},
		{"another record", filed, settled(str("once"), "digest-filed", func(r *api.Request) { r.ID = "r2" }), ""},
		{"still open", filed, settled(str("once"), "digest-filed", func(r *api.Request) { r.Status = "open" }), ""},
		{"expired", filed, settled(nil, "digest-filed", func(r *api.Request) { r.Status = "expired"; r.DecidedDigest = nil }), ""},
		{"resolved without a decision", filed, settled(nil, "digest-filed", nil), ""},
		// The agent edits its own record after filing (say, to another
		// command) and the operator approves the edit: that approval is not
		// one of what the agent filed.
		{"decided on an edited version", filed, settled(str("once"), "digest-edited", func(r *api.Request) { r.ActionDigest = "digest-edited" }), ""},
		{"a decision that is not a filed option", filed, settled(str("always"), "digest-filed", func(r *api.Request) {
			r.Options = append(r.Options, api.Option{ID: "always", Label: "Always", Effect: "allow"})
		}), ""},
		{"a filing without a digest", &api.Request{ID: "r1", Options: filed.Options}, settled(str("once"), "", nil), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := client.DecidedOption(c.filed, c.final); got != c.want {
				t.Fatalf("DecidedOption = %q, want %q", got, c.want)
			}
		})
	}
}
