package web

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// Portable rewrites an inferred schema as /mcp serves it (tests).
var Portable = portable

// MCPInputSchema is the schema the MCP SDK infers for a tool's argument
// type, before Portable (tests).
func MCPInputSchema(tool string) *jsonschema.Schema {
	s, err := jsonschema.ForType(reflect.TypeOf(mcpInputs[tool]()).Elem(), nil)
	if err != nil {
		panic(err)
	}
	return s
}

// ErrorStatus is the one table from error code to HTTP status (tests).
var ErrorStatus = statusOf
