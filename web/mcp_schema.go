package web

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTool is a tool whose input and output schemas are inferred from In and
// Out as the SDK would, then spelled portably (see portable).
func mcpTool[In, Out any](name, description string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description, InputSchema: portableSchema[In](), OutputSchema: portableSchema[Out]()}
}

// portableSchema is the schema of T with every type union rewritten as
// anyOf branches of one type each.
func portableSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(T), err)) // a tool type the SDK cannot describe: a programming error
	}
	portable(s)
	return s
}

// portable rewrites s in place so no schema under it has a type array: a
// nullable field inferred as {"type": ["null", "string"]} becomes
// {"anyOf": [{"type": "null"}, {"type": "string"}]}. Both accept the same
// values, but clients that map tool schemas onto a single-type dialect (the
// OpenAPI subset of Gemini's function declarations) reject or drop a type
// array. The annotations stay on the outer schema; every assertion moves into
// each typed branch, where keywords of another type are inert.
func portable(s *jsonschema.Schema) {
	eachChild(s, portable)
	if len(s.Types) == 0 {
		return
	}
	outer := jsonschema.Schema{Title: s.Title, Description: s.Description, Default: s.Default, Deprecated: s.Deprecated,
		ReadOnly: s.ReadOnly, WriteOnly: s.WriteOnly, Examples: s.Examples, Comment: s.Comment}
	for _, t := range s.Types {
		if t == "null" {
			outer.AnyOf = append(outer.AnyOf, &jsonschema.Schema{Type: "null"})
			continue
		}
		branch := *s
		branch.Types, branch.Type = nil, t
		branch.Title, branch.Description, branch.Default, branch.Deprecated = "", "", nil, false
		branch.ReadOnly, branch.WriteOnly, branch.Examples, branch.Comment = false, false, nil, ""
		outer.AnyOf = append(outer.AnyOf, &branch)
	}
	*s = outer
}

var (
	schemaPtr   = reflect.TypeFor[*jsonschema.Schema]()
	schemaSlice = reflect.TypeFor[[]*jsonschema.Schema]()
	schemaMap   = reflect.TypeFor[map[string]*jsonschema.Schema]()
)

// eachChild calls f on every schema directly under s, whatever keyword holds
// it, so no subschema (items, properties, $defs, anyOf…) is missed.
func eachChild(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		switch fv := v.Field(i); fv.Type() {
		case schemaPtr:
			if c := fv.Interface().(*jsonschema.Schema); c != nil {
				f(c)
			}
		case schemaSlice:
			for _, c := range fv.Interface().([]*jsonschema.Schema) {
				f(c)
			}
		case schemaMap:
			for _, c := range fv.Interface().(map[string]*jsonschema.Schema) {
				f(c)
			}
		}
	}
}
