package web_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestMCPPortableSchemas checks that spelling a schema portably changes no
// verdict: for each tool input and for the request record the tools return,
// a valid instance and every mutation of it (each member, at any depth, set to
// null, to a value of each JSON type, removed, or joined by an unknown member)
// is accepted by the served schema exactly when the SDK's inferred schema
// accepts it.
func TestMCPPortableSchemas(t *testing.T) {
	note, at := "ship it", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	record := api.Request{ID: "r1", Kind: "approval", Status: "resolved", Title: "t", Risk: &note,
		Options: []api.Option{{ID: "allow", Label: "Allow", Effect: "allow"}}, DefaultOption: &note, Decision: &note,
		Answer: &note, Note: &note, SourceRef: map[string]string{"k": "v"}, RuntimeID: &note, PendingID: &note,
		ResolvedAt: &at, DecidedBy: &note, DecidedVia: &note, Hold: &api.Hold{Rule: "r", Until: at, Then: "allow"},
		EditedAt: &at, DecidedDigest: &note,
		Approvals: &api.Approvals{Groups: []string{"g"}, Required: 2, Note: &note, Votes: []api.Vote{{By: "op", Decision: "allow", Note: &note, At: at}}}}
	cases := []struct {
		name   string
		schema func() *jsonschema.Schema
		valid  any
	}{
		{"request_approval arguments", func() *jsonschema.Schema { return web.MCPInputSchema("request_approval") },
			map[string]any{"title": "t", "summary": "s", "detail": "d", "options": []any{map[string]any{"id": "allow", "label": "Allow", "effect": "allow"}}, "expires_in": 600}},
		{"wait_for_decision arguments", func() *jsonschema.Schema { return web.MCPInputSchema("wait_for_decision") }, map[string]any{"id": "r1", "seconds": 5}},
		{"get_request arguments", func() *jsonschema.Schema { return web.MCPInputSchema("get_request") }, map[string]any{"id": "r1"}},
		{"notify_operator arguments", func() *jsonschema.Schema { return web.MCPInputSchema("notify_operator") }, map[string]any{"message": "m"}},
		{"consult_operator arguments", func() *jsonschema.Schema { return web.MCPInputSchema("consult_operator") }, map[string]any{"question": "q", "default_action": "d"}},
		{"the request record", func() *jsonschema.Schema {
			s, err := jsonschema.For[api.Request](nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, record},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inferred, served := c.schema(), c.schema()
			web.Portable(served)
			if n := typeArrays(t, served); n > 0 {
				t.Fatalf("the served schema still has %d type arrays", n)
			}
			want, got := resolve(t, inferred), resolve(t, served)
			valid := roundTrip(t, c.valid)
			accepted, refused, nullable := 0, 0, 0
			for name, inst := range mutations(valid) {
				we, ge := want.Validate(inst), got.Validate(inst)
				if (we == nil) != (ge == nil) {
					t.Errorf("%s: inferred says %v, served says %v", name, we, ge)
				}
				if we == nil {
					accepted++
				} else {
					refused++
				}
				if we == nil && strings.HasSuffix(name, " null") {
					nullable++
				}
			}
			if want.Validate(valid) != nil || got.Validate(valid) != nil {
				t.Fatalf("the valid instance is refused: %v / %v", want.Validate(valid), got.Validate(valid))
			}
			t.Logf("%d mutations accepted (%d of them a null), %d refused, alike under both schemas", accepted, nullable, refused)
			if refused == 0 {
				t.Fatal("no mutation was refused: the comparison proves nothing")
			}
		})
	}
}

// typeArrays counts "type" members that are arrays anywhere in s's JSON.
func typeArrays(t *testing.T, s *jsonschema.Schema) int {
	t.Helper()
	var walk func(v any) int
	walk = func(v any) int {
		n := 0
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["type"].([]any); ok {
				n++
			}
			for _, c := range v {
				n += walk(c)
			}
		case []any:
			for _, c := range v {
				n += walk(c)
			}
		}
		return n
	}
	return walk(roundTrip(t, s))
}

func resolve(t *testing.T, s *jsonschema.Schema) *jsonschema.Resolved {
	t.Helper()
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// roundTrip is v as JSON decodes it: maps, slices, float64s.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mutations are valid with one change, named by where and what: every
// object member at any depth replaced by each kind of JSON value, or removed,
// and every object given an unknown member. It changes valid in place and
// copies it at each step, then puts each change back.
func mutations(valid any) map[string]any {
	kinds := map[string]any{"null": nil, "string": "x", "integer": 1.0, "fraction": 1.5, "boolean": true,
		"empty array": []any{}, "empty object": map[string]any{}, "array of a string": []any{"x"},
		"array of an empty object": []any{map[string]any{}}, "object with a string": map[string]any{"k": "x"}}
	out := map[string]any{}
	var walk func(path string, v any, set func(any), del func())
	walk = func(path string, v any, set func(any), del func()) {
		switch v := v.(type) {
		case map[string]any:
			v["zz_unknown"] = "x"
			out[path+".zz_unknown added"] = deepCopy(valid)
			delete(v, "zz_unknown")
			for k, c := range v {
				walk(path+"."+k, c, func(n any) { v[k] = n }, func() { delete(v, k) })
			}
		case []any:
			for i, c := range v {
				walk(path+"["+strconv.Itoa(i)+"]", c, func(n any) { v[i] = n }, nil)
			}
		}
		if path == "" {
			return
		}
		for name, kv := range kinds {
			set(kv)
			out[fmt.Sprintf("%s %s", path, name)] = deepCopy(valid)
		}
		set(v)
		if del != nil {
			del()
			out[path+" removed"] = deepCopy(valid)
			set(v)
		}
	}
	walk("", valid, func(any) {}, nil)
	return out
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
