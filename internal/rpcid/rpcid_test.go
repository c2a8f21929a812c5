package rpcid_test

import (
	"encoding/json"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/rpcid"
)

func TestKey(t *testing.T) {
	same := [][]string{
		{`1`, `1.0`, `1e0`, `10E-1`, `0.1e1`, ` 1 `, `1.000`},
		{`0`, `-0`, `0.0`, `0e5`},
		{`-15`, `-1.5e1`, `-150e-1`},
		{`"1"`, `"\u0031"`},
		{`"abc"`, `"a\u0062c"`},
		{`12345678901234567890123`, `1.2345678901234567890123e22`},
	}
	for _, group := range same {
		for _, id := range group[1:] {
			if a, b := rpcid.Key(json.RawMessage(group[0])), rpcid.Key(json.RawMessage(id)); a != b {
				t.Errorf("%s and %s are one id; keys %q and %q", group[0], id, a, b)
			}
		}
	}
	apart := [][2]string{
		{`1`, `"1"`},
		{`1`, `2`},
		{`1`, `-1`},
		{`0`, `"0"`},
		{`1`, `1.0000000000000000000001`},
		{`9007199254740993`, `9007199254740992`}, // equal as float64
		{`"1"`, `"1.0"`},
		{`null`, `"null"`},
	}
	for _, p := range apart {
		if rpcid.Key(json.RawMessage(p[0])) == rpcid.Key(json.RawMessage(p[1])) {
			t.Errorf("%s and %s are different ids and share a key", p[0], p[1])
		}
	}
	if k := rpcid.Key(json.RawMessage(`1e99999999999999999999`)); k == rpcid.Key(json.RawMessage(`1`)) {
		t.Errorf("an exponent past int64 keyed as 1: %q", k)
	}
}
