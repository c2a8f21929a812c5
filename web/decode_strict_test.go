package web_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
)

// TestDecodeStrictNames holds the name check every body passes: a name twice
// under any case folding, escaped or not, at any depth, is refused; the same
// name in sibling objects is not.
func TestDecodeStrictNames(t *testing.T) {
	type inner struct {
		Command string `json:"command"`
		X       string `json:"x"`
	}
	type body struct {
		Kind  string  `json:"kind"`
		Items []inner `json:"items"`
		In    *inner  `json:"in"`
	}
	for _, tc := range []struct {
		name, body, refused string // refused: part of the detail; "" accepted
	}{
		{"plain", `{"kind":"a","items":[{"command":"x"},{"command":"y"}],"in":{"command":"z"}}`, ""},
		{"exact twice", `{"kind":"a","kind":"b"}`, `"kind" appears twice`},
		{"another case", `{"kind":"a","KIND":"b"}`, `"KIND" appears twice under another case`},
		{"mixed case, nested", `{"in":{"command":"a","CoMmAnD":"b"}}`, `"CoMmAnD" appears twice under another case`},
		{"in an array's object", `{"items":[{"command":"a"},{"x":"1","X":"2"}]}`, `"X" appears twice under another case`},
		{"Kelvin sign", `{"kind":"a","\u212aind":"b"}`, "\"\u212aind\" appears twice under another case"},
		{"escaped ASCII, other case", `{"kind":"a","\u004bind":"b"}`, `"Kind" appears twice under another case`},
		{"escaped ASCII, same name", `{"kind":"a","\u006bind":"b"}`, `appears twice`},
		{"case twice across sibling objects", `{"items":[{"command":"a"},{"COMMAND":"b"}]}`, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v body
			err := web.DecodeStrict([]byte(tc.body), &v)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %s", tc.body)
			}
			if !strings.Contains(models.ErrorDetail(err), tc.refused) {
				t.Fatalf("detail %q, want it to say %q", models.ErrorDetail(err), tc.refused)
			}
		})
	}
}
