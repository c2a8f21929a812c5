package openapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehousehq/gatehouse/api"
)

// Tags group the operations by the part of the API they belong to; an
// operation's tag is the first that its path starts with.
var tags = []struct{ name, prefix, desc string }{
	{"service", "/healthz", "Liveness and this document."},
	{"service", "/openapi.json", ""},
	{"requests", "/v1/requests", "Filing, reading, waiting on and deciding requests."},
	{"requests", "/v1/decisions", ""},
	{"requests", "/api/operator-attention", ""},
	{"hooks", "/v1/hooks", "Agent clients' own hooks, answered in their format."},
	{"sessions", "/v1/agent-sessions", "Agent sessions: who waits, and the events that say so."},
	{"audit", "/v1/audit", "The hash-chained audit trail."},
	{"operators", "/v1/me", "The calling operator's availability, page sessions and chat links."},
	{"operators", "/v1/sessions", ""},
	{"operators", "/v1/chat", ""},
	{"tokens", "/v1/tokens", "Tokens and their roles."},
	{"rules", "/v1/rules", "Rules and remembered allows: what decides without a person."},
	{"rules", "/v1/remembered", ""},
	{"rules", "/v1/suggestions", ""},
	{"runtimes", "/v1/runtimes", "Runtimes that take decisions back: registration, the pull feed and the signing keys."},
	{"runtimes", "/v1/keys", ""},
	{"pending", "/v1/pending", "Request-bound single-use grants for one exact HTTP request."},
	{"push", "/v1/devices", "Phone and browser notifications."},
	{"push", "/v1/webpush", ""},
}

func tagOf(path route) string {
	for _, t := range tags {
		if strings.HasPrefix(string(path), t.prefix) {
			return t.name
		}
	}
	return ""
}

func tagList() []any {
	var out []any
	for _, t := range tags {
		if t.desc != "" {
			out = append(out, map[string]any{"name": t.name, "description": t.desc})
		}
	}
	return out
}

// errorResponses are the shared answers of each error status: the error
// body with the codes that status answers.
var errorResponses = map[int]struct{ name, desc string }{
	400: {"BadRequest", "The request is malformed or breaks a rule; nothing changed"},
	401: {"Unauthenticated", "No token, or one the server does not know or has revoked"},
	403: {"Forbidden", "The caller's role or the request's policy does not allow this"},
	404: {"NotFound", "No such record, or one the caller may not see"},
	409: {"Conflict", "The record changed or is not in a state that allows this; a version conflict carries the current record"},
	410: {"Gone", "The request expired"},
	413: {"TooLarge", "The body is over the server's limit"},
	415: {"UnsupportedMediaType", "The body is not JSON"},
	422: {"Unprocessable", "Well-formed, but not a decision this request takes"},
	429: {"TooManyRequests", "Over the caller's allowance: wait Retry-After seconds and try again"},
	500: {"Internal", "The server failed; it logged why"},
	503: {"Unavailable", "The database is unreachable or the server is stopping: retry after Retry-After seconds"},
}

var retryAfter = map[string]any{"Retry-After": map[string]any{
	"description": "Seconds to wait before trying again.",
	"schema":      map[string]any{"type": "string", "pattern": "^[0-9]+$"},
}}

// errorResponse answers a $ref to status's shared error answer, writing it
// into responses the first time.
func errorResponse(status int, byStatus map[int][]string, responses map[string]any) map[string]any {
	e, ok := errorResponses[status]
	if !ok {
		e.name, e.desc = "Status"+strconv.Itoa(status), http.StatusText(status)
	}
	if _, done := responses[e.name]; !done {
		schema := ref("ErrorBody")
		desc := e.desc + "."
		if codes := byStatus[status]; len(codes) > 0 {
			schema = map[string]any{"allOf": []any{schema, map[string]any{
				"properties": map[string]any{"error": map[string]any{"enum": codes}}}}}
			desc = e.desc + ". Codes: " + strings.Join(codes, ", ") + "."
		}
		content := jsonContent(schema)
		if codes := byStatus[status]; len(codes) > 0 {
			content["application/json"].(map[string]any)["example"] = map[string]any{"error": codes[0], "detail": e.desc + "."}
		}
		r := map[string]any{"description": desc, "content": content}
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			r["headers"] = retryAfter
		}
		responses[e.name] = r
	}
	return map[string]any{"$ref": "#/components/responses/" + e.name}
}

// security is who may call: a bearer token of one of roles, or for
// operators the page's session (with its CSRF token when the call changes
// state). No roles: anyone, no token needed.
func (op operation) security() []any {
	switch {
	case op.optionalAuth:
		return []any{map[string]any{}, map[string]any{"bearer": []string{}}}
	case len(op.roles) == 0:
		return []any{}
	}
	out := []any{map[string]any{"bearer": []string{}}}
	if slices.Contains(op.roles, roleOperator) {
		page := map[string]any{"session": []string{}}
		if op.method != "get" {
			page["csrf"] = []string{}
		}
		out = append(out, page)
	}
	return out
}

// document is the operation's OpenAPI object.
func (op operation) document(c *components, byStatus map[int][]string, shared map[string]any) (map[string]any, error) {
	desc := op.desc
	if desc != "" {
		desc += "\n\n"
	}
	switch {
	case op.optionalAuth:
		desc += "Anyone; a token, when sent, must be valid."
	case len(op.roles) == 0:
		desc += "Anyone; no token needed."
	default:
		desc += "Callers: " + strings.Join(op.roles, ", ") + "."
	}
	o := map[string]any{"operationId": op.id, "summary": op.summary, "description": desc,
		"tags": []string{tagOf(op.path)}, "security": op.security()}
	var params []any
	for _, p := range op.path.params() {
		params = append(params, map[string]any{"name": p, "in": "path", "required": true, "schema": map[string]any{"type": "string"},
			"description": pathParams[p]})
	}
	for _, q := range op.query {
		params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.desc, "schema": q.schema})
	}
	for _, h := range op.headers {
		params = append(params, map[string]any{"name": h.name, "in": "header", "description": h.desc, "schema": map[string]any{"type": "string"}})
	}
	if params != nil {
		o["parameters"] = params
	}
	if op.body != nil {
		r, err := c.ref(op.body)
		if err != nil {
			return nil, err
		}
		_, empty := op.body.(api.Empty)
		_, cancel := op.body.(api.Cancel)           // its reason is optional, and so the body
		_, accept := op.body.(api.AcceptSuggestion) // so is its duration
		content := jsonContent(r)
		if op.example != nil {
			content["application/json"].(map[string]any)["example"] = op.example
		}
		o["requestBody"] = map[string]any{"required": !empty && !cancel && !accept, "content": content}
	}
	responses := map[string]any{}
	for _, r := range op.responses {
		if r.body == (api.ErrorBody{}) {
			responses[strconv.Itoa(r.status)] = errorResponse(r.status, byStatus, shared)
			continue
		}
		desc := r.desc
		if desc == "" {
			desc = http.StatusText(r.status)
		}
		out := map[string]any{"description": desc}
		if r.body != nil {
			s, err := c.ref(r.body)
			if err != nil {
				return nil, err
			}
			out["content"] = jsonContent(s)
			if r.example != nil {
				out["content"].(map[string]any)["application/json"].(map[string]any)["example"] = r.example
			}
		}
		responses[strconv.Itoa(r.status)] = out
	}
	// Every route but this document's reads the database: it may be down
	// (503, retry) or fail (500).
	// A hook route never answers an error status (operation.hook).
	if op.id != "openapi" && !op.hook {
		responses["503"] = errorResponse(http.StatusServiceUnavailable, byStatus, shared)
	}
	if !op.hook {
		responses["500"] = errorResponse(http.StatusInternalServerError, byStatus, shared)
	}
	o["responses"] = responses
	return o, nil
}

var pathParams = map[string]string{
	"id":         "The record's id.",
	"pending_id": "The grant's pending id.",
	"token":      "The device's token (or its id).",
}

// webhooks is the forward a runtime receives: the signed decide.
func webhooks(c *components) (map[string]any, error) {
	decision, err := c.ref(api.Decision{})
	if err != nil {
		return nil, err
	}
	var signed []any
	for _, h := range []struct{ name, desc string }{
		{api.HeaderKeyID, "The id of the key that signed the call (GET /v1/keys lists the public keys)."},
		{api.HeaderTimestamp, "Unix seconds when it was signed; refuse a call far from your clock."},
		{api.HeaderDelivery, "This delivery's id; a retry of the same forward carries the same id."},
		{api.HeaderRuntime, "The id of the runtime the call is for: refuse a call for another."},
		{api.HeaderSignature, "Standard base64 Ed25519 signature of the signing string: " + api.SignatureVersion +
			", method, path, timestamp, delivery id, runtime id and hex SHA-256 of the body, one per line (docs/forwarding.md)."},
		{api.HeaderIdempotent, "requestId:version: apply each decision at most once."},
	} {
		signed = append(signed, map[string]any{"name": h.name, "in": "header", "required": true, "description": h.desc,
			"schema": map[string]any{"type": "string"}})
	}
	return map[string]any{"decision": map[string]any{"post": map[string]any{
		"operationId": "forwardDecision",
		"summary":     "A decision forwarded to a runtime",
		"description": "POSTed to a registered runtime's callback_url + " + api.DecidePath + ", signed with the server's Ed25519 key. " +
			"The runtime verifies the signature headers before it acts, and acts only when decided_digest equals what it filed.",
		"tags":        []string{"runtimes"},
		"security":    []any{},
		"parameters":  signed,
		"requestBody": map[string]any{"required": true, "content": jsonContent(decision)},
		"responses": map[string]any{
			"200": map[string]any{"description": "Applied (or a repeat of the version applied): delivered."},
			"409": map[string]any{"description": "The runtime no longer holds the live prompt: conflict."},
		},
	}}}, nil
}
