package web

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/labstack/echo/v4"
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

// AddHookRoute registers h as a hook route with Claude Code's format (tests
// of the fallback).
func AddHookRoute(s *Server, path string, h echo.HandlerFunc) { s.hookRoute(path, claudeCodeHook, h) }

// CheckHookRoutes is New's check that every route under /v1/hooks/ came
// through hookRoute (tests).
func CheckHookRoutes(s *Server) error { return s.checkHookRoutes() }

// ErrorStatus is the one table from error code to HTTP status (tests).
var ErrorStatus = statusOf
