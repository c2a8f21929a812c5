package api_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

func entry(s string, seq uint64, version int, detail string) api.AuditEntry {
	return api.AuditEntry{
		Seq: seq, At: "2026-12-01T12:00:00.000001Z", RequestID: "req_" + s, Version: version,
		Action: "decide", Actor: s, Via: s + "via", Detail: json.RawMessage(detail), PrevHash: "ab" + s,
	}
}

// The direct canonical form of an audit entry is byte for byte the general
// RFC 8785 canonicaliser's, or every hash written would fail verification.
func TestAuditCanonicalMatchesJCS(t *testing.T) {
	strs := []string{"", "operator:ann", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "é ü ß 日本 🙂", "\u2028\u2029", "\ufeff", "bad \xff utf8", "\u202e"}
	details := []string{"", "{}", `{"decision":"once"}`, `{"note":"x","decision":"deny","n":1.50,"z":[3,2,1]}`, `{"b":{"y":1,"x":2},"a":null}`}
	for _, s := range strs {
		for _, d := range details {
			for _, n := range []struct {
				seq     uint64
				version int
			}{{0, 0}, {1, 1}, {1 << 53, -7}, {1<<53 + 1, 1<<53 + 1}, {^uint64(0), 3}} {
				for _, chain := range []uint32{0, 1, 7, ^uint32(0)} {
					e := entry(s, n.seq, n.version, d)
					e.Chain = chain
					direct, general, derr, gerr := api.CanonicalBoth(e)
					if d == "" {
						if derr == nil || gerr == nil {
							t.Errorf("an empty detail was canonicalised: %s / %s", direct, general)
						}
						continue
					}
					if derr != nil || gerr != nil {
						t.Fatalf("%q %s: %v / %v", s, d, derr, gerr)
					}
					if !bytes.Equal(direct, general) {
						t.Errorf("%q %s seq %d version %d:\n direct  %s\n general %s", s, d, n.seq, n.version, direct, general)
					}
				}
			}
		}
	}
}

func FuzzAuditCanonical(f *testing.F) {
	f.Add("operator:ann", "api", `{"decision":"once"}`, uint64(7), 2, uint32(0))
	f.Add("a\"\\\x01", "\u2028", `{}`, uint64(1<<60), -1, uint32(3))
	f.Fuzz(func(t *testing.T, actor, via, detail string, seq uint64, version int, chain uint32) {
		e := entry("x", seq, version, detail)
		e.Actor, e.Via, e.Chain = actor, via, chain
		direct, general, derr, gerr := api.CanonicalBoth(e)
		if (derr == nil) != (gerr == nil) {
			t.Fatalf("one path refused it: direct %v, general %v", derr, gerr)
		}
		if derr != nil {
			return
		}
		if !bytes.Equal(direct, general) {
			t.Fatalf("direct %s\ngeneral %s", direct, general)
		}
	})
}
