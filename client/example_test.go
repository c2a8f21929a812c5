package client_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// The worked example in docs/forwarding.md is this program's output: a real
// key, body and signature, verified here.
func ExampleSign() {
	seed := sha256.Sum256([]byte("gatehouse forwarding example"))
	key := ed25519.NewKeyFromSeed(seed[:])
	pub := key.Public().(ed25519.PublicKey)
	body := []byte(`{"requestId":"req_4f9e38b934e1dd287ffc7d62","version":2,"decision":"once","answer":null,"note":"go ahead"}`)
	at := time.Unix(1796000000, 0)
	h := http.Header{}
	api.Sign(h, key, "key_0f1fbf452459370c5757a422", http.MethodPost, api.DecidePath, at, "dlv_1f3e98088b6fe99bd95e68bd", "rt_9a2a2185086a4a9a843b2c1f", body)

	fmt.Println("public key:", base64.StdEncoding.EncodeToString(pub))
	fmt.Printf("signing string:\n%s\n", api.SigningString(http.MethodPost, api.DecidePath, at.Unix(), "dlv_1f3e98088b6fe99bd95e68bd", "rt_9a2a2185086a4a9a843b2c1f", body))
	for _, k := range []string{api.HeaderKeyID, api.HeaderTimestamp, api.HeaderDelivery, api.HeaderRuntime, api.HeaderSignature} {
		fmt.Printf("%s: %s\n", k, h.Get(k))
	}
	keys := map[string]ed25519.PublicKey{"key_0f1fbf452459370c5757a422": pub}
	_, err := api.Verify(h, keys, "rt_9a2a2185086a4a9a843b2c1f", http.MethodPost, api.DecidePath, body, at, 5*time.Minute)
	fmt.Println("verified:", err == nil)
	_, err = api.Verify(h, keys, "rt_0c3d4b1e2f5a6978d0e1f2a3", http.MethodPost, api.DecidePath, body, at, 5*time.Minute)
	fmt.Println("at another runtime:", err)
	// Output:
	// public key: ijchZNWsD8gIQNptKP2IldjJIcXEzzJ8MfhqvkXanx0=
	// signing string:
	// gatehouse-v2
	// POST
	// /v1/permissions/decide
	// 1796000000
	// dlv_1f3e98088b6fe99bd95e68bd
	// rt_9a2a2185086a4a9a843b2c1f
	// 5b03553a01a033388e54f194a0aab5a429a794099aa36e5ce4f81b0bf93039ad
	// Gatehouse-Key-Id: key_0f1fbf452459370c5757a422
	// Gatehouse-Timestamp: 1796000000
	// Gatehouse-Delivery: dlv_1f3e98088b6fe99bd95e68bd
	// Gatehouse-Runtime-Id: rt_9a2a2185086a4a9a843b2c1f
	// Gatehouse-Signature: pJgTr+RBEM38x91rGqW9kDXmX0MaZTnsQjhoeStcmNmcStHPRkf8u61rN0PaGWcRcLPkfx0qynFv4RDnivzaAw==
	// verified: true
	// at another runtime: the call is signed for another runtime
}
