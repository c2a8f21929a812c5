package codexbridge_test

import (
	"encoding/json"
	"testing"

	"github.com/gatehousehq/gatehouse/codexbridge"
)

// The bridge matches an answer to its request by id: one id written two
// ways (1 and 1.0) is one request, a string and a number are two.
func TestIDKey(t *testing.T) {
	key := func(s string) string { return codexbridge.IDKey(json.RawMessage(s)) }
	for _, p := range [][2]string{{`1`, `1.0`}, {`7`, `7e0`}, {`"a"`, `"\u0061"`}} {
		if key(p[0]) != key(p[1]) {
			t.Errorf("%s and %s are one JSON-RPC id; keys %q and %q", p[0], p[1], key(p[0]), key(p[1]))
		}
	}
	for _, p := range [][2]string{{`1`, `"1"`}, {`0`, `"0"`}, {`1`, `2`}} {
		if key(p[0]) == key(p[1]) {
			t.Errorf("%s and %s are two JSON-RPC ids; one key %q", p[0], p[1], key(p[0]))
		}
	}
}
