package client_test

import (
	"crypto/ed25519"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// TestHandlerDigest: with Filed set, a genuinely signed forward is handed over
// only when its decided_digest is what the runtime's filing answered.
func TestHandlerDigest(t *testing.T) {
	server := testKey("server")
	keys := map[string]ed25519.PublicKey{"key_1": server.Public().(ed25519.PublicKey)}
	now := time.Unix(1_790_000_000, 0)
	rt := newRuntime(t, keys, func() time.Time { return now })
	filed := api.ActionDigest(&api.Request{Kind: "permission", Title: "Run rm -rf /srv", Options: []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}}})
	edited := api.ActionDigest(&api.Request{Kind: "permission", Title: "Read the README", Options: []api.Option{{ID: "once", Label: "Deny", Effect: "allow"}}})
	rt.h.Filed = func(id string) (string, bool) { return filed, id == "req_mine" }
	once := "once"
	for _, c := range []struct {
		name, id, digest string
		want             int
	}{
		{"decided on an edited version", "req_mine", edited, http.StatusConflict},
		{"no digest", "req_mine", "", http.StatusConflict},
		{"a request this runtime did not file", "req_other", filed, http.StatusConflict},
		{"decided on what was filed", "req_mine", filed, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := rt.handed()
			d := api.Decision{RequestID: c.id, Version: 2, Decision: &once, DecidedDigest: c.digest, DecidedVia: "page"}
			if code := send(t, signed(t, rt.srv.URL, server, "key_1", now, "dlv_"+c.name, d)); code != c.want {
				t.Fatalf("status %d, want %d", code, c.want)
			}
			if handed := rt.handed() - before; (c.want == http.StatusOK) != (handed == 1) {
				t.Fatalf("handed %d", handed)
			}
		})
	}
}
