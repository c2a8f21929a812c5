// Package openapi is the OpenAPI 3.1 document of the JSON API, generated from
// the wire types in package api. It is a package of its own so that the
// programs that only speak the API (the hook, once per tool call) do not link
// the schema generator or pay its package initialisation.
package openapi

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/gatehousehq/gatehouse/api"
)

// Server is what the document needs from the server that serves it.
type Server struct {
	BaseURL string
	// ErrorStatus is the server's one table from error code to HTTP status:
	// the document's error codes, and which status answers each, come from it.
	ErrorStatus map[string]int
	// SessionCookie names the page session's cookie.
	SessionCookie string
}

// Document is the OpenAPI 3.1 document of the JSON API that srv serves. The schemas are
// generated from package api's types by reflection, one shared component per
// type, so a field added to a type is in the document; the operations (paths.go)
// are the hand-written part and list every JSON route. Left out: the
// operator's HTML page and its form posts, /login and /logout, /ws, /static,
// /mcp (JSON-RPC, described by its own tools/list), /metrics (Prometheus
// text) and the chat surfaces' webhooks (/chat/…, Slack's and Telegram's
// formats, signed by them).
func Document(srv Server) ([]byte, error) {
	c := &components{schemas: map[string]any{}}
	var codes []string
	byStatus := map[int][]string{}
	for code, status := range srv.ErrorStatus {
		codes = append(codes, code)
		byStatus[status] = append(byStatus[status], code)
	}
	slices.Sort(codes)
	for s := range byStatus {
		slices.Sort(byStatus[s])
	}
	maps.Copy(c.schemas, enumSchemas(codes))
	if _, err := c.ref(api.ErrorBody{}); err != nil {
		return nil, err
	}
	errResponses := map[string]any{}
	paths := map[string]map[string]any{}
	for _, op := range operations() {
		o, err := op.document(c, byStatus, errResponses)
		if err != nil {
			return nil, err
		}
		if paths[op.path.openAPI()] == nil {
			paths[op.path.openAPI()] = map[string]any{}
		}
		paths[op.path.openAPI()][op.method] = o
	}
	webhooks, err := webhooks(c)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "Gatehouse",
			"version": "1",
			"summary": "The operator's inbox for AI agents.",
			"description": "Agents and runtimes file requests; operators decide them. Errors answer " +
				"{\"error\": \"snake_code\", \"detail\": \"…\"}, the code one of ErrorCode, each with one HTTP status; a 2xx means committed.\n\n" +
				"Tokens authenticate as a bearer token (gatehouse token create). The operator's page authenticates with its session " +
				"cookie, which state-changing calls pair with an X-CSRF-Token header.\n\n" + leftOut,
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"},
		},
		"servers":  []any{map[string]any{"url": srv.BaseURL, "description": "This server"}},
		"security": []any{map[string]any{"bearer": []string{}}},
		"tags":     tagList(),
		"paths":    paths,
		"webhooks": webhooks,
		"components": map[string]any{
			"schemas":   c.schemas,
			"responses": errResponses,
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer",
					"description": "A token's secret: Authorization: Bearer TOKEN. The token's role (operator, agent, runtime) decides what it may call."},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": srv.SessionCookie,
					"description": "The operator's page session (set by POST /login); an operator's only."},
				"csrf": map[string]any{"type": "apiKey", "in": "header", "name": "X-CSRF-Token",
					"description": "The page session's CSRF token, required with the session cookie on every call that changes state."},
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// leftOut says which routes the document leaves out, and why.
const leftOut = "Not described here: the operator's HTML page and its form posts (/, /requests/…, /decisions, /me/away, /remembered/…), " +
	"/login, /logout, /ws and /static (the page's own); /mcp, which speaks MCP's JSON-RPC and lists its tools itself; " +
	"/metrics, Prometheus text for an operator's scraper; and /chat/…, the Slack and Telegram webhooks, which take those services' " +
	"formats and signatures."

// document marks the answer that is this document: any JSON object.
type document struct{}

func jsonContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}
