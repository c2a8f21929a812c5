package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

func signedHeads(t *testing.T, priv ed25519.PrivateKey, chains []api.AuditChainHead) *api.AuditHead {
	t.Helper()
	sig := ed25519.Sign(priv, []byte(api.HeadsSigningString(chains)))
	return &api.AuditHead{Chains: chains, KeyID: "k", Signature: base64.StdEncoding.EncodeToString(sig)}
}

// The head's signature covers every chain's newest link: changing, dropping,
// adding or swapping any chain's line fails it.
func TestAuditHeadSignsEveryChain(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	h := func(c byte) string { return strings.Repeat(string(c), 64) }
	chains := func() []api.AuditChainHead {
		return []api.AuditChainHead{
			{Chain: 0, Seq: 9, Hash: h('a'), At: "2026-12-03T10:00:00.000001Z"},
			{Chain: 1, Seq: 4, Hash: h('b'), At: "2026-12-03T10:00:00.000002Z"},
			{Chain: 2, Seq: 0, Hash: h('0'), At: ""},
		}
	}
	t.Run("a head as signed verifies", func(t *testing.T) {
		if err := signedHeads(t, priv, chains()).Verify(pub); err != nil {
			t.Fatal(err)
		}
	})
	for _, c := range []struct {
		name   string
		change func(h *api.AuditHead)
	}{
		{"a later chain's seq moved back", func(h *api.AuditHead) { h.Chains[1].Seq = 3 }},
		{"a later chain's hash changed", func(h *api.AuditHead) { h.Chains[1].Hash = strings.Repeat("c", 64) }},
		{"an empty chain given an entry", func(h *api.AuditHead) { h.Chains[2].Seq = 1 }},
		{"a chain's at changed", func(h *api.AuditHead) { h.Chains[0].At = "2026-12-03T10:00:00.000009Z" }},
		{"a chain dropped", func(h *api.AuditHead) { h.Chains = h.Chains[:2] }},
		{"a chain added", func(h *api.AuditHead) {
			h.Chains = append(h.Chains, api.AuditChainHead{Chain: 3, Seq: 1, Hash: strings.Repeat("d", 64)})
		}},
		{"two chains' numbers swapped", func(h *api.AuditHead) { h.Chains[0].Chain, h.Chains[1].Chain = 1, 0 }},
		{"read as a one-chain head", func(h *api.AuditHead) {
			h.Seq, h.Hash, h.At, h.Chains = h.Chains[0].Seq, h.Chains[0].Hash, h.Chains[0].At, nil
		}},
	} {
		t.Run(c.name+" fails the signature", func(t *testing.T) {
			hd := signedHeads(t, priv, chains())
			c.change(hd)
			if err := hd.Verify(pub); !errors.Is(err, api.ErrHeadSignature) {
				t.Fatalf("verified: %v", err)
			}
		})
	}
	t.Run("a head saved before there were chains still verifies, as chain 0", func(t *testing.T) {
		sig := ed25519.Sign(priv, []byte(api.HeadSigningString(9, h('a'), "2026-12-03T10:00:00.000001Z")))
		old := &api.AuditHead{Seq: 9, Hash: h('a'), At: "2026-12-03T10:00:00.000001Z", KeyID: "k", Signature: base64.StdEncoding.EncodeToString(sig)}
		if err := old.Verify(pub); err != nil {
			t.Fatal(err)
		}
		if got := old.ChainHeads(); len(got) != 1 || got[0].Chain != 0 || got[0].Seq != 9 {
			t.Fatalf("chain heads %+v", got)
		}
	})
}
