package api_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"net/http"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// FuzzVerify: a call signed by the trusted key verifies (round trip); a call
// whose signature headers, body or path were changed never verifies as
// anything but what was signed; and no input panics.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"requestId":"req_1","version":2,"decision":"once"}`), "dlv_1", "rt_1", api.DecidePath, "Gatehouse-Delivery", "dlv_2")
	f.Add([]byte(`{}`), "dlv_x", "rt_2", "/prefix"+api.DecidePath, "Gatehouse-Timestamp", "0012")
	f.Add([]byte(``), "d", "r", "/", "Gatehouse-Signature", "!!!")
	f.Add([]byte(`x`), "d", "r", "/", "Gatehouse-Runtime-Id", "r\nx")
	f.Add([]byte(`x`), "d", "r", "/", "Gatehouse-Key-Id", "")
	seed := sha256.Sum256([]byte("fuzz"))
	key := ed25519.NewKeyFromSeed(seed[:])
	keys := map[string]ed25519.PublicKey{"k1": key.Public().(ed25519.PublicKey)}
	at := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, body []byte, delivery, runtime, path, header, value string) {
		if delivery == "" || runtime == "" {
			return // Sign needs them; Verify refuses them as unsigned (seeded above)
		}
		h := http.Header{}
		api.Sign(h, key, "k1", http.MethodPost, path, at, delivery, runtime, body)
		s, err := api.Verify(h, keys, runtime, http.MethodPost, path, body, at, time.Minute)
		if err != nil || s.DeliveryID != delivery || s.RuntimeID != runtime || !s.At.Equal(at) || s.KeyID != "k1" {
			t.Fatalf("round trip: %+v %v", s, err)
		}
		if _, err := api.Verify(h, keys, runtime, http.MethodPost, path, append(body, 'x'), at, time.Minute); err == nil {
			t.Fatalf("a changed body verified")
		}
		if _, err := api.Verify(h, keys, runtime, http.MethodPost, path+"x", body, at, time.Minute); err == nil {
			t.Fatalf("a changed path verified")
		}
		before := h.Get(header)
		h[http.CanonicalHeaderKey(header)] = []string{value}
		s2, err := api.Verify(h, keys, runtime, http.MethodPost, path, body, at, time.Minute)
		if err != nil {
			return
		}
		if s2 != s {
			t.Fatalf("header %s %q -> %q verified as %+v; signed was %+v", header, before, value, s2, s)
		}
	})
}
