package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/google/jsonschema-go/jsonschema"
)

// apiPkg is the package whose named structs become shared components.
var apiPkg = reflect.TypeFor[api.Request]().PkgPath()

// refMark marks a placeholder the generator leaves where a component goes.
const refMark = "component:"

// components generates schemas: one component per named type of package api,
// each referring to the others by $ref rather than writing them out again.
type components struct {
	schemas map[string]any
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// nullable is s or null.
func nullable(s map[string]any) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// ref generates v's type (once, with every api type it reaches) and answers a
// $ref to it; for a slice of values, a schema matching any one of them.
func (c *components) ref(v any) (map[string]any, error) {
	switch v := v.(type) {
	case document:
		return map[string]any{"type": "object", "description": "An OpenAPI 3.1 document."}, nil
	case []any:
		var refs []any
		for _, x := range v {
			r, err := c.ref(x)
			if err != nil {
				return nil, err
			}
			refs = append(refs, r)
		}
		return map[string]any{"anyOf": refs}, nil
	}
	t := reflect.TypeOf(v)
	if err := c.generate(t); err != nil {
		return nil, err
	}
	return ref(t.Name()), nil
}

// generate writes t's component and those of the api types it refers to.
func (c *components) generate(t reflect.Type) error {
	name := t.Name()
	if _, ok := c.schemas[name]; ok {
		return nil
	}
	c.schemas[name] = nil // being generated: a type that refers back finds it
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		// A time is RFC 3339 text on the wire.
		reflect.TypeFor[time.Time](): {Type: "string", Format: "date-time"},
		// An audit entry's detail is a JSON object of what the action carried.
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}}
	embedded := map[reflect.Type]bool{}
	embeddedIn(t, embedded)
	reached := map[reflect.Type]bool{}
	reach(t, reached)
	for u := range reached {
		if u != t && !embedded[u] {
			opts.TypeSchemas[u] = &jsonschema.Schema{Type: "object", Comment: refMark + u.Name()}
		}
	}
	s, err := jsonschema.ForType(t, opts)
	if err != nil {
		return fmt.Errorf("openapi: schema of %s: %w", name, err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	replaced := replaceMarks(m).(map[string]any)
	refine(replaced, owners(t))
	if rule, ok := typeRules[name]; ok {
		// allOf, not siblings, so that generators read the fields and the
		// rule together (TypeScript: fields & (one | other)).
		replaced = map[string]any{"description": replaced["description"], "allOf": []any{replaced, rule}}
		delete(replaced["allOf"].([]any)[0].(map[string]any), "description")
	}
	c.schemas[name] = replaced
	for u := range reached {
		if u != t && !embedded[u] {
			if err := c.generate(u); err != nil {
				return err
			}
		}
	}
	return nil
}

// replaceMarks swaps each placeholder for a $ref (or a $ref or null, where
// the field is a pointer).
func replaceMarks(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if mark, ok := v["$comment"].(string); ok && strings.HasPrefix(mark, refMark) {
			r := ref(strings.TrimPrefix(mark, refMark))
			if types, ok := v["type"].([]any); ok && len(types) == 2 {
				return nullable(r)
			}
			return r
		}
		for k, x := range v {
			v[k] = replaceMarks(x)
		}
	case []any:
		for i, x := range v {
			v[i] = replaceMarks(x)
		}
	}
	return v
}

// reach collects the named structs of package api that t's fields reach.
func reach(t reflect.Type, into map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != apiPkg || into[t] {
		return
	}
	into[t] = true
	for i := range t.NumField() {
		reach(t.Field(i).Type, into)
	}
}

// embeddedIn collects the structs t embeds (their fields are t's own).
func embeddedIn(t reflect.Type, into map[reflect.Type]bool) {
	if t.Kind() != reflect.Struct {
		return
	}
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous {
			into[f.Type] = true
			embeddedIn(f.Type, into)
		}
	}
}

// owners are the names a property of t is looked up under: t's and those of
// the structs it embeds (Wait's kind is Request's kind).
func owners(t reflect.Type) []string {
	out := []string{t.Name()}
	embedded := map[reflect.Type]bool{}
	embeddedIn(t, embedded)
	for u := range embedded {
		out = append(out, u.Name())
	}
	return out
}

// refine adds to a generated schema what reflection cannot see: the shared
// enums, descriptions, limits and the type's own rules.
func refine(s map[string]any, owners []string) {
	props, _ := s["properties"].(map[string]any)
	if d, ok := typeDescriptions[owners[0]]; ok {
		s["description"] = d
	}
	for _, owner := range owners {
		for name, p := range props {
			prop := p.(map[string]any)
			key := owner + "." + name
			if e, ok := enumFields[key]; ok {
				if types, ok := prop["type"].([]any); ok && len(types) == 2 {
					prop = nullable(ref(e))
				} else {
					prop = ref(e)
				}
			}
			for k, v := range limits[key] {
				prop[k] = v
			}
			if d, ok := descriptions[key]; ok {
				prop["description"] = d
			}
			props[name] = prop
		}
	}
}
