// Package openapi is the OpenAPI 3.1 document of the JSON API, generated from
// the wire types in package api. It is a package of its own so that the
// programs that only speak the API (the hook, once per tool call) do not link
// the schema generator or pay its package initialisation.
package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/google/jsonschema-go/jsonschema"
)

// Document is the OpenAPI 3.1 document of the JSON API served at baseURL. The
// schemas are generated from this package's types by reflection, so a field
// added to a type is in the document; the operations below are the one
// hand-written part and list every JSON route (not the HTML pages).
func Document(baseURL string) ([]byte, error) {
	schemas := map[string]any{}
	paths := map[string]map[string]any{}
	for _, op := range operations() {
		o := map[string]any{"operationId": op.id, "summary": op.summary, "responses": map[string]any{}}
		if len(op.roles) > 0 {
			o["security"] = []any{map[string]any{"bearer": []string{}}}
			o["description"] = "Callers: " + strings.Join(op.roles, ", ") + "."
		}
		var params []any
		for _, p := range op.path.params() {
			params = append(params, map[string]any{"name": p, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range op.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.desc, "schema": q.schema})
		}
		for _, h := range op.headers {
			params = append(params, map[string]any{"name": h, "in": "header", "schema": map[string]any{"type": "string"}})
		}
		if params != nil {
			o["parameters"] = params
		}
		if op.body != nil {
			ref, err := schemaRef(schemas, op.body)
			if err != nil {
				return nil, err
			}
			_, empty := op.body.(api.Empty)
			_, cancel := op.body.(api.Cancel) // its reason is optional, and so the body
			o["requestBody"] = map[string]any{"required": !empty && !cancel, "content": jsonContent(ref)}
		}
		responses := o["responses"].(map[string]any)
		for _, r := range op.responses {
			desc := r.desc
			if desc == "" {
				desc = http.StatusText(r.status)
			}
			out := map[string]any{"description": desc}
			if r.body != nil {
				ref, err := schemaRef(schemas, r.body)
				if err != nil {
					return nil, err
				}
				out["content"] = jsonContent(ref)
			}
			if r.status == http.StatusTooManyRequests {
				out["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait", "schema": map[string]any{"type": "string"}}}
			}
			responses[strconv.Itoa(r.status)] = out
		}
		if paths[op.path.openAPI()] == nil {
			paths[op.path.openAPI()] = map[string]any{}
		}
		paths[op.path.openAPI()][op.method] = o
	}
	decision, err := schemaRef(schemas, api.Decision{})
	if err != nil {
		return nil, err
	}
	var signed []any
	for _, h := range []string{api.HeaderKeyID, api.HeaderTimestamp, api.HeaderDelivery, api.HeaderRuntime, api.HeaderSignature, api.HeaderIdempotent} {
		signed = append(signed, map[string]any{"name": h, "in": "header", "required": true, "schema": map[string]any{"type": "string"}})
	}
	webhooks := map[string]any{"decision": map[string]any{"post": map[string]any{
		"operationId": "forwardDecision",
		"summary":     "A decision forwarded to a runtime's callback_url + " + api.DecidePath + ", signed (docs/forwarding.md)",
		"parameters":  signed,
		"requestBody": map[string]any{"required": true, "content": jsonContent(decision)},
		"responses": map[string]any{
			"200": map[string]any{"description": "Applied (or a repeat of the version applied): delivered"},
			"409": map[string]any{"description": "The runtime no longer holds the live prompt: conflict"},
		},
	}}}
	doc := map[string]any{
		"webhooks": webhooks,
		"openapi":  "3.1.0",
		"info": map[string]any{
			"title":   "Gatehouse",
			"version": "1",
			"description": "The operator's inbox for AI agents. Errors answer {\"error\": \"snake_code\", \"detail\": \"…\"}. " +
				"Bearer tokens authenticate; the page's session cookie does too (with an X-CSRF-Token header on state-changing calls).",
		},
		"servers":    []any{map[string]any{"url": baseURL}},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas, "securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// document marks the answer that is this document: any JSON object.
type document struct{}

// schemaRef generates the schema of v's type into schemas (once) and answers a
// $ref to it; for a slice of values, a schema matching any one of them.
func schemaRef(schemas map[string]any, v any) (map[string]any, error) {
	switch v := v.(type) {
	case document:
		return map[string]any{"type": "object"}, nil
	case []any:
		var refs []any
		for _, x := range v {
			ref, err := schemaRef(schemas, x)
			if err != nil {
				return nil, err
			}
			refs = append(refs, ref)
		}
		return map[string]any{"anyOf": refs}, nil
	}
	t := reflect.TypeOf(v)
	name := t.Name()
	if _, ok := schemas[name]; !ok {
		// A time is RFC 3339 text on the wire.
		opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
			reflect.TypeFor[time.Time](): {Type: "string", Format: "date-time"},
			// An audit entry's detail is a JSON object of what the action carried.
			reflect.TypeFor[json.RawMessage](): {Type: "object"},
		}}
		s, err := jsonschema.ForType(t, opts)
		if err != nil {
			return nil, fmt.Errorf("openapi: schema of %s: %w", name, err)
		}
		schemas[name] = s
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}, nil
}

func jsonContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}
