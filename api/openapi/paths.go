package openapi

import (
	"net/http"
	"strings"

	"github.com/gatehousehq/gatehouse/api"
)

// Roles, as the operations name their callers.
const (
	roleOperator = "operator"
	roleRuntime  = "runtime"
	roleAgent    = "agent"
)

// route is a path as Echo spells it ("/v1/requests/:id").
type route string

// openAPI is the path as OpenAPI spells it ("/v1/requests/{id}").
func (r route) openAPI() string {
	parts := strings.Split(string(r), "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// params are the path's parameter names.
func (r route) params() []string {
	var out []string
	for _, p := range strings.Split(string(r), "/") {
		if strings.HasPrefix(p, ":") {
			out = append(out, p[1:])
		}
	}
	return out
}

type query struct {
	name, desc string
	schema     map[string]any
}

// answer is one documented status. body is a value of the answer's type, or
// a slice of such values when the answer is any one of them.
type answer struct {
	status  int
	body    any
	desc    string
	example any
}

type header struct{ name, desc string }

type operation struct {
	method, id, summary string
	desc                string // more than the summary says, when there is more
	path                route
	roles               []string // nil: anyone, no token needed
	optionalAuth        bool     // anyone, but a token sent must be valid
	query               []query
	headers             []header
	body                any // a value of the body's type, nil for none
	example             any // of the body
	responses           []answer
	// hook: a hook route answers every outcome that is not a decision with
	// the hook's own "no decision" and a 2xx (an agent's CLI reads any other
	// status as "go on"), so it declares no error status at all.
	hook bool
}

func seconds(name, desc string, lo, hi int) query {
	return query{name, desc, map[string]any{"type": "integer", "minimum": lo, "maximum": hi}}
}

func text(name, desc string) query {
	return query{name, desc, map[string]any{"type": "string"}}
}

// enumQuery is a query parameter taking one of a shared enum, or extra.
func enumQuery(name, desc, enum string, extra ...string) query {
	if len(extra) == 0 {
		return query{name, desc, ref(enum)}
	}
	return query{name, desc, map[string]any{"anyOf": []any{ref(enum), map[string]any{"type": "string", "enum": extra}}}}
}

// errs are error answers, each with the one error shape.
func errs(statuses ...int) []answer {
	out := make([]answer, len(statuses))
	for i, s := range statuses {
		out[i] = answer{status: s, body: api.ErrorBody{}}
	}
	return out
}

func answers(ok []answer, bad ...int) []answer { return append(ok, errs(bad...)...) }

// operations lists every JSON route: who may call it, what it takes and what
// it answers. web's routes and this list must agree; web's OpenAPI test calls
// each route and checks the real answers against the document.
func operations() []operation {
	var (
		all     = []string{roleOperator, roleRuntime, roleAgent}
		filers  = []string{roleRuntime, roleAgent}
		op      = []string{roleOperator}
		runtime = []string{roleRuntime}
		rec     = []answer{{status: http.StatusOK, body: api.Request{}}}
		wait    = seconds("timeout", "how long to wait, in seconds (default 60)", 1, 300)
		decided = answers([]answer{{status: http.StatusOK, body: api.Decided{}}}, 400, 401, 403, 404, 409, 410, 413, 422)
		// decidedExample is decided with an example of the answer.
		decidedExample = answers([]answer{{status: http.StatusOK, body: api.Decided{}, example: exampleDecided()}}, 400, 401, 403, 404, 409, 410, 413, 422)
		// The chain's seq fits in 62 bits (web refuses more).
		auditAfter = query{"after", "the seq to start after (0: from the first entry)", map[string]any{"type": "integer", "minimum": 0, "maximum": int64(1) << 62}}
		auditLimit = seconds("limit", "at most this many entries (default 100)", 1, 1000)
		auditChain = query{"chain", "the chain to read (0 when absent; GET /v1/audit/head lists them)", map[string]any{"type": "integer", "minimum": 0, "maximum": int64(1) << 31}}
	)
	return []operation{
		{method: "get", path: "/healthz", id: "healthz", summary: "Liveness: the service and its database answer",
			responses: answers([]answer{{status: 200, body: api.Health{}}}, 503)},
		{method: "get", path: "/openapi.json", id: "openapi", summary: "This document",
			responses: []answer{{status: 200, body: document{}}}},

		{method: "post", path: "/v1/requests", id: "fileRequest", summary: "File a request for the operator",
			roles: filers, body: api.NewRequest{}, example: exampleFiling(),
			desc: "Files a request and answers the record at once; GET /v1/requests/{id}/wait waits for the decision. " +
				"Each token may file at a rate (429 filing_too_fast with Retry-After beyond it). A rule may decide it at filing: " +
				"the answer is then already resolved.",
			headers: []header{{"Idempotency-Key", "Names this filing: a retry with the same key and body answers the record it filed (200); " +
				"the same key with another body is 409 idempotency_key_reused."}},
			responses: answers([]answer{{status: 201, body: api.Request{}, desc: "Filed", example: exampleRequest()},
				{status: 200, body: api.Request{}, desc: "An Idempotency-Key repeat: the record it filed"}}, 400, 401, 403, 409, 413, 429)},
		{method: "get", path: "/v1/requests", id: "listRequests", summary: "List requests, newest first (callers other than operators see their own)",
			roles: all, query: []query{enumQuery("status", "Only requests with this status, or all (default: open)", "Status", "all"),
				enumQuery("kind", "Only requests of this kind", "Kind"), enumQuery("risk", "Only requests of this risk", "Risk"),
				text("cursor", "next_cursor of the previous page"),
				{"limit", "page size", map[string]any{"type": "integer", "minimum": 1, "maximum": 200}}},
			responses: answers([]answer{{status: 200, body: api.List{}}}, 400, 401, 403)},
		{method: "get", path: "/v1/requests/:id", id: "getRequest", summary: "One request",
			roles: all, responses: answers(rec, 401, 403, 404)},
		{method: "patch", path: "/v1/requests/:id", id: "patchRequest", summary: "Edit an open, unsealed request the caller filed; raises its version",
			roles: filers, body: api.Patch{}, responses: answers(rec, 400, 401, 403, 404, 409, 413)},
		{method: "post", path: "/v1/requests/:id/cancel", id: "cancelRequest", summary: "Withdraw an open request the caller filed, optionally saying why (the record's note)",
			roles: filers, body: api.Cancel{}, responses: answers(rec, 400, 401, 403, 404, 409)},
		{method: "get", path: "/v1/requests/:id/wait", id: "waitRequest", summary: "Long-poll: at once if not open, else when it changes, else after timeout with timed_out true",
			roles: all, query: []query{wait},
			desc: "Answers at once when the request is no longer open; otherwise holds the call until it changes or the timeout passes. " +
				"Each caller may hold a few waits at once (429 too_many_waiters beyond them).",
			responses: answers([]answer{{status: 200, body: api.Wait{}}}, 400, 401, 403, 404, 429)},
		{method: "post", path: "/v1/requests/:id/decide", id: "decideRequest", summary: "Decide on the version seen; 409 answers the current record",
			roles: op, body: api.Decide{}, example: exampleDecide(),
			desc: "Takes an offered option on the version the operator saw. A stale version is 409 version_conflict with the current record; " +
				"an expired request is 410; an option not offered is 422. Under an approval policy the decide is a vote, and the record stays " +
				"open until enough votes agree.",
			responses: decidedExample},
		{method: "post", path: "/v1/requests/:id/dismiss", id: "dismissRequest", summary: "Retire a non-blocking item",
			roles: op, body: api.Empty{}, responses: answers(rec, 400, 401, 403, 404, 409)},
		{method: "get", path: "/v1/requests/:id/audit", id: "auditRequest", summary: "A request's audit trail, oldest first",
			roles: op, responses: answers([]answer{{status: 200, body: api.AuditPage{}}}, 401, 403, 404)},
		{method: "get", path: "/v1/audit", id: "listAudit", summary: "One hash chain of the trail (?chain=N) after ?after=SEQ, at most ?limit=N entries",
			roles: op, query: []query{auditChain, auditAfter, auditLimit}, responses: answers([]answer{{status: 200, body: api.AuditPage{}}}, 400, 401, 403)},
		{method: "get", path: "/v1/audit/head", id: "getAuditHead", summary: "Every chain's newest link, signed together with the key at /v1/keys",
			roles: op, responses: answers([]answer{{status: 200, body: api.AuditHead{}}}, 401, 403)},
		{method: "post", path: "/v1/decisions", id: "decideBatch", summary: "Decide 1 to 100 requests, each on its own on the version seen, as decide would; never saves a rule. Each result carries the status a single decide would answer",
			roles: op, body: api.Batch{}, responses: answers([]answer{{status: 200, body: api.BatchAnswer{}}}, 400, 401, 403, 413)},
		{method: "post", path: "/api/operator-attention/permissions/decide", id: "decideAttention", summary: "The same decide, in the shape runtimes speak",
			roles: op, body: api.AttentionDecide{}, responses: decided},

		{method: "post", path: "/v1/hooks/claude-code", id: "answerClaudeCodeHook", summary: "Claude Code's http hook (PreToolUse or PermissionRequest): files the call, waits up to timeout for the operator, answers the hook's JSON; 204 is no decision (Claude Code asks). A session event (Stop, Notification, UserPromptSubmit, SessionStart, SessionEnd, PostToolUse, SubagentStop) is recorded and answered 204 at once",
			roles: filers, query: []query{seconds("timeout", "how long to wait for the operator, in seconds (default 300); keep it under the hook's own timeout", 1, 600)}, body: api.ClaudeCodeHookInput{},
			responses: answers([]answer{{status: 200, body: api.ClaudeCodeHookAnswer{}, desc: "The hook answer: a decision, or PreToolUse's ask when there is none"}, {status: 204, desc: "No decision for a PermissionRequest: Claude Code shows its own prompt"}}), hook: true},

		{method: "get", path: "/v1/agent-sessions", id: "listAgentSessions", summary: "Agent sessions, who waits first, longest first (an agent or runtime sees its own)",
			roles: []string{roleOperator, roleRuntime, roleAgent}, responses: answers([]answer{{status: 200, body: api.AgentSessions{}}}, 401)},
		{method: "post", path: "/v1/agent-sessions/events", id: "postSessionEvent", summary: "Record what one of the caller's sessions did: started, waiting (opens or refreshes its waiting item), moved or ended (resolve it)",
			roles: filers, body: api.SessionEvent{}, responses: answers([]answer{{status: 200, body: api.SessionEventAnswer{}}}, 400, 401, 403, 404, 409, 413)},

		{method: "get", path: "/v1/sessions", id: "listSessions", summary: "Live page sessions: who is logged in where",
			roles: op, responses: answers([]answer{{status: 200, body: api.Sessions{}}}, 401, 403)},
		{method: "delete", path: "/v1/sessions/:id", id: "endSession", summary: "End a page session (its cookie is refused at once)",
			roles: op, responses: answers([]answer{{status: 204}}, 401, 403, 404)},

		{method: "get", path: "/v1/me/availability", id: "getAvailability", summary: "The calling operator's away state and quiet hours",
			roles: op, responses: answers([]answer{{status: 200, body: api.Availability{}}}, 401, 403)},
		{method: "put", path: "/v1/me/away", id: "putAway", summary: "Mark the calling operator away (optionally until a time) or back: no push while away, and requests whose every approver is away escalate at once",
			roles: op, body: api.Away{}, responses: answers([]answer{{status: 200, body: api.Availability{}}}, 400, 401, 403, 413)},
		{method: "put", path: "/v1/me/quiet-hours", id: "putQuietHours", summary: "Set the calling operator's daily quiet hours (no push then) in an IANA time zone",
			roles: op, body: api.QuietHours{}, responses: answers([]answer{{status: 200, body: api.Availability{}}}, 400, 401, 403, 413)},
		{method: "delete", path: "/v1/me/quiet-hours", id: "clearQuietHours", summary: "Clear the calling operator's quiet hours",
			roles: op, responses: answers([]answer{{status: 200, body: api.Availability{}}}, 401, 403)},

		{method: "post", path: "/v1/tokens", id: "createToken", summary: "Create a token; the answer's token field is its secret, shown this once",
			roles: op, body: api.NewToken{}, responses: answers([]answer{{status: 201, body: api.CreatedToken{}, desc: "Created"}}, 400, 401, 403, 409, 413)},
		{method: "get", path: "/v1/tokens", id: "listTokens", summary: "Every token, revoked ones included, without secrets",
			roles: op, responses: answers([]answer{{status: 200, body: api.Tokens{}}}, 401, 403)},
		{method: "delete", path: "/v1/tokens/:id", id: "revokeToken", summary: "Revoke the live tokens with this id or name; their page sessions end",
			roles: op, responses: answers([]answer{{status: 200, body: api.RevokedTokens{}}}, 401, 403, 404)},

		{method: "post", path: "/v1/chat/link-codes", id: "createChatLinkCode", summary: "A one-time code that links the chat identity which sends it to the calling operator",
			roles: op, responses: answers([]answer{{status: 201, body: api.ChatLinkCode{}, desc: "Created"}}, 401, 403)},
		{method: "get", path: "/v1/remembered", id: "listRemembered", summary: "Every remembered allow, newest first, with its scope, match, uses and end",
			roles: op, responses: answers([]answer{{status: 200, body: api.RememberedList{}}}, 401, 403)},
		{method: "delete", path: "/v1/remembered/:id", id: "revokeRemembered", summary: "Revoke a remembered allow at once (again: answers it unchanged)",
			roles: op, responses: answers([]answer{{status: 200, body: api.Remembered{}}}, 401, 403, 404)},
		{method: "get", path: "/v1/suggestions", id: "listSuggestions", summary: "The remembered allows proposed now: where operators kept allowing one command family in one project, with the grant each makes and the decisions it covers",
			roles: op, responses: answers([]answer{{status: 200, body: api.SuggestionList{}}}, 401, 403)},
		{method: "post", path: "/v1/suggestions/:id/accept", id: "acceptSuggestion", summary: "Make the suggested remembered allow, as the calling operator (audited); the body may choose its duration",
			roles: op, body: api.AcceptSuggestion{},
			responses: answers([]answer{{status: 200, body: api.SuggestionAccepted{}}}, 400, 401, 403, 404, 409, 413)},
		{method: "post", path: "/v1/suggestions/:id/dismiss", id: "dismissSuggestion", summary: "Refuse a suggestion for good (audited); again: answers it unchanged",
			roles: op, responses: answers([]answer{{status: 200, body: api.Suggestion{}}}, 401, 403, 404, 409)},

		{method: "get", path: "/v1/rules", id: "listRules", summary: "The rules in force",
			roles: op, responses: answers([]answer{{status: 200, body: api.Rules{}}}, 401, 403)},

		{method: "get", path: "/v1/keys", id: "getKeys", summary: "The public keys forwards are signed with", optionalAuth: true,
			responses: answers([]answer{{status: 200, body: api.Keys{}}}, 401)},
		{method: "post", path: "/v1/runtimes", id: "registerRuntime", summary: "Register the caller's runtime (the same name again updates it)",
			roles: runtime, body: api.RuntimeRegistration{},
			responses: answers([]answer{{status: 201, body: api.Runtime{}, desc: "Registered"}, {status: 200, body: api.Runtime{}, desc: "Updated"}}, 400, 401, 403, 413)},
		{method: "get", path: "/v1/runtimes", id: "listRuntimes", summary: "Runtimes and their forwarding health (a runtime sees its own)",
			roles: []string{roleOperator, roleRuntime}, responses: answers([]answer{{status: 200, body: api.Runtimes{}}}, 401, 403)},
		{method: "get", path: "/v1/runtimes/:id/decisions", id: "feedDecisions", summary: "Long-poll feed of decisions on the runtime's requests; asking for what follows a cursor acknowledges it",
			roles: runtime, query: []query{text("after", "a cursor this feed gave"), wait},
			responses: answers([]answer{{status: 200, body: api.DecisionPage{}}}, 400, 401, 403, 404, 429)},

		{method: "post", path: "/v1/pending", id: "filePending", summary: "File an approval for one exact HTTP request (a request-bound single-use grant)",
			roles: runtime, body: api.NewPending{}, responses: answers([]answer{{status: 201, body: api.PendingFiled{}}}, 400, 401, 403, 409, 413, 429)},
		{method: "post", path: "/v1/pending/claim", id: "claimPending", summary: "Release one approved grant for exactly this request",
			roles: runtime, body: api.NewPending{}, responses: []answer{
				{status: 200, body: api.Claimed{}},
				{status: 400, body: api.ErrorBody{}}, {status: 401, body: api.ErrorBody{}},
				{status: 403, body: []any{api.AgentBody{}, api.ErrorBody{}}, desc: "approval_denied or approval_expired (for the agent), or forbidden"},
				{status: 404, body: api.ErrorBody{}, desc: "no_grant: nothing approved matches"},
				{status: 409, body: api.AgentBody{}, desc: "approval_pending (for the agent)"},
			}},
		{method: "get", path: "/v1/pending/:pending_id", id: "getPending", summary: "A grant's status",
			roles: runtime, responses: answers([]answer{{status: 200, body: api.PendingStatus{}}}, 401, 403, 404)},
		{method: "get", path: "/v1/pending/:pending_id/wait", id: "waitPending", summary: "Long-poll a grant's status",
			roles: runtime, query: []query{wait}, responses: answers([]answer{{status: 200, body: api.PendingWait{}}}, 400, 401, 403, 404, 429)},

		{method: "get", path: "/v1/devices", id: "listDevices", summary: "Push devices, retired ones included",
			roles: op, responses: answers([]answer{{status: 200, body: api.Devices{}}}, 401, 403)},
		{method: "post", path: "/v1/devices", id: "registerDevice", summary: "Register an APNs device token",
			roles: op, body: api.NewDevice{}, responses: answers([]answer{{status: 201, body: api.Device{}, desc: "Registered"}, {status: 200, body: api.Device{}, desc: "Known (live again)"}}, 400, 401, 403, 413)},
		{method: "delete", path: "/v1/devices/:token", id: "dropDevice", summary: "Drop a device by its token or id",
			roles: op, responses: answers([]answer{{status: 204}}, 401, 403, 404)},
		{method: "get", path: "/v1/webpush/key", id: "webPushKey", summary: "The VAPID public key browsers subscribe with",
			roles: op, responses: answers([]answer{{status: 200, body: api.VAPIDKey{}}}, 401, 403)},
		{method: "post", path: "/v1/webpush/subscribe", id: "subscribeWebPush", summary: "Record a browser's push subscription",
			roles: op, body: api.PushSubscription{}, responses: answers([]answer{{status: 201, body: api.Device{}, desc: "Subscribed"}, {status: 200, body: api.Device{}, desc: "Known"}}, 400, 401, 403, 413)},
		{method: "post", path: "/v1/webpush/unsubscribe", id: "unsubscribeWebPush", summary: "Drop a browser's push subscription",
			roles: op, body: api.Unsubscribe{}, responses: answers([]answer{{status: 204}}, 400, 401, 403, 404)},
	}
}
