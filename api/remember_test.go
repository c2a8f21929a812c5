package api_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

// TestRememberOfferInDigest: what an option declares it remembers is the
// filer's, so it is in the action digest; the grant that decided a request is
// the server's, so it is not.
func TestRememberOfferInDigest(t *testing.T) {
	base := api.Request{Title: "t", Options: []api.Option{{ID: "always", Label: "Always", Effect: "allow"}}}
	with := base
	with.Options = []api.Option{{ID: "always", Label: "Always", Effect: "allow", Remember: &api.RememberOffer{Scope: "runtime", For: "8h"}}}
	if api.ActionDigest(&base) == api.ActionDigest(&with) {
		t.Fatal("an option's remember does not move the digest")
	}
	wider := base
	wider.Options = []api.Option{{ID: "always", Label: "Always", Effect: "allow", Remember: &api.RememberOffer{Scope: "runtime", For: "until_revoked"}}}
	if api.ActionDigest(&with) == api.ActionDigest(&wider) {
		t.Fatal("a longer remember does not move the digest")
	}
	g := "rem_1"
	granted := base
	granted.GrantID = &g
	if api.ActionDigest(&base) != api.ActionDigest(&granted) {
		t.Fatal("grant_id moves the digest")
	}
}
