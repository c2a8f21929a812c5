package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// oaEnv is a server, the document it serves, a validator built from it, and
// the operations called so far.
type oaEnv struct {
	*webtest.Env
	v      validator.Validator
	ops    map[string]string // "METHOD /path/{x}" -> operationId
	called map[string]bool   // operationIds called
	skips  map[string]string // operationIds whose route is not wired -> why
	op     string            // an operator token
	agent  string
	other  string // another agent
	rt     string // a runtime token
	start  chan struct{}
}

func newOAEnv(t *testing.T, dialect string) *oaEnv {
	return newOAEnvWith(t, dialect, web.Config{})
}

// newOAEnvWith is newOAEnv with cfg's filing allowance.
func newOAEnvWith(t *testing.T, dialect string, cfg web.Config) *oaEnv {
	t.Helper()
	start := make(chan struct{}, 16)
	e := &oaEnv{Env: webtest.New(t, dialect, web.Config{MaxWaitersPerCaller: 1, BodyLimit: "16K",
		FilingRate: cfg.FilingRate, FilingBurst: cfg.FilingBurst,
		OnWaitStart: func() { start <- struct{}{} }}),
		called: map[string]bool{}, skips: map[string]string{}, start: start}
	e.op = e.Token(models.RoleOperator, "op")
	e.agent = e.Token(models.RoleAgent, "a1")
	e.other = e.Token(models.RoleAgent, "a2")
	e.rt = e.Token(models.RoleRuntime, "rt")

	// The document is read from the server, as any client would.
	status, body := e.Do(http.MethodGet, "/openapi.json", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", status, body)
	}
	doc, err := libopenapi.NewDocument(body)
	if err != nil {
		t.Fatalf("the document does not parse: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("the document is not valid OpenAPI 3.1: %s", describe(verrs))
	}
	e.v = v
	var parsed struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &parsed); err != nil {
		t.Fatal(err)
	}
	e.ops = map[string]string{}
	for path, methods := range parsed.Paths {
		for m, o := range methods {
			e.ops[strings.ToUpper(m)+" "+path] = o.OperationID
		}
	}
	return e
}

// oaCall is one real call. badRequest says the request breaks the document on
// purpose (no token, a field the API does not have, a number out of range): the
// validator must refuse it too, so server and document agree on what is valid.
type oaCall struct {
	op, method, path, token string
	body                    any
	header                  map[string]string
	want                    int
	badRequest              bool
}

// do sends c, checks its status, validates the real request and response
// against the document, and answers the body.
func (e *oaEnv) do(t *testing.T, c oaCall) []byte {
	t.Helper()
	return e.doCtx(t, context.Background(), c)
}

func (e *oaEnv) doCtx(t *testing.T, ctx context.Context, c oaCall) []byte {
	t.Helper()
	var raw []byte
	switch b := c.body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	build := func() *http.Request {
		req, err := http.NewRequestWithContext(ctx, c.method, e.URL+c.path, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if c.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		return req
	}
	resp, err := e.HTTP.Do(build())
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	e.called[c.op] = true
	if resp.StatusCode != c.want {
		t.Fatalf("%s %s: %d, want %d: %s", c.method, c.path, resp.StatusCode, c.want, body)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := e.v.ValidateHttpResponse(build(), resp); !ok {
		t.Errorf("%s %s: the %d answer does not match the document: %s\n%s", c.method, c.path, resp.StatusCode, describe(errs), body)
	}
	ok, errs := e.v.ValidateHttpRequest(build())
	switch {
	case c.badRequest && ok:
		t.Errorf("%s %s: the document accepts a request the server refused (%d)", c.method, c.path, resp.StatusCode)
	case !c.badRequest && !ok:
		t.Errorf("%s %s: the request does not match the document: %s", c.method, c.path, describe(errs))
	}
	return body
}

// wired reports whether the route answers at all in this assembly; when not,
// its operations are recorded as skipped with the reason.
func (e *oaEnv) wired(t *testing.T, method, path string, ops ...string) bool {
	t.Helper()
	status, body := e.Do(method, path, e.op, nil)
	if status == http.StatusNotFound && strings.Contains(string(body), "route_not_found") {
		for _, op := range ops {
			e.skips[op] = "webtest does not wire " + path
		}
		return false
	}
	return true
}

// describe is the validator's errors without the schema and object each one
// quotes in full.
func describe(errs any) string {
	b, _ := json.Marshal(errs)
	var list []map[string]any
	if json.Unmarshal(b, &list) != nil {
		return string(b)
	}
	for _, e := range list {
		delete(e, "howToFix")
		if subs, ok := e["validationErrors"].([]any); ok {
			for _, sub := range subs {
				if m, ok := sub.(map[string]any); ok {
					delete(m, "referenceSchema")
					delete(m, "referenceObject")
				}
			}
		}
	}
	b, _ = json.MarshalIndent(list, "", " ")
	return string(b)
}

func decodeAs[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

type oaRecord struct {
	ID        string `json:"id"`
	Version   int    `json:"version"`
	RuntimeID string `json:"runtime_id"`
}

// TestOpenAPIMatchesEveryRoute calls every JSON route for real, with each status
// it documents that a test can reach, and validates every request and answer
// against GET /openapi.json with libopenapi-validator.
func TestOpenAPIMatchesEveryRoute(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newOAEnv(t, dialect)
		t.Run("service", func(t *testing.T) { oaService(t, e) })
		t.Run("requests", func(t *testing.T) { oaRequests(t, e) })
		t.Run("decide", func(t *testing.T) { oaDecide(t, e) })
		t.Run("batch", func(t *testing.T) { oaBatch(t, e) })
		t.Run("runtimes", func(t *testing.T) { oaRuntimes(t, e) })
		t.Run("pending", func(t *testing.T) { oaPending(t, e) })
		t.Run("devices", func(t *testing.T) { oaDevices(t, e) })
		t.Run("sessions", func(t *testing.T) { oaSessions(t, e) })
		t.Run("tokens", func(t *testing.T) { oaTokens(t, e) })
		t.Run("availability", func(t *testing.T) { oaAvailability(t, e) })
		t.Run("remembered", func(t *testing.T) { oaRemembered(t, e) })
		t.Run("suggestions", func(t *testing.T) { oaSuggestions(t, e) })
		t.Run("hooks", func(t *testing.T) { oaHooks(t, e) })
		t.Run("agent sessions", func(t *testing.T) { oaAgentSessions(t, e) })
		t.Run("limits and outages", func(t *testing.T) { oaLimits(t, dialect) })
		t.Run("every operation is called", func(t *testing.T) {
			var skipped []string
			for key, op := range e.ops {
				switch {
				case e.called[op]:
				case e.skips[op] != "":
					skipped = append(skipped, op+": "+e.skips[op])
				default:
					t.Errorf("%s (%s) is documented but no test calls it", op, key)
				}
			}
			if len(skipped) > 0 {
				testkit.Skipf(t, "not checked, their routes are not wired by webtest yet:\n%s", strings.Join(skipped, "\n"))
			}
		})
	})
}

func oaService(t *testing.T, e *oaEnv) {
	e.do(t, oaCall{op: "healthz", method: "GET", path: "/healthz", want: 200})
	e.do(t, oaCall{op: "openapi", method: "GET", path: "/openapi.json", want: 200})
	e.do(t, oaCall{op: "listRules", method: "GET", path: "/v1/rules", token: e.op, want: 200})
	e.do(t, oaCall{op: "listRules", method: "GET", path: "/v1/rules", token: e.agent, want: 403})
	e.do(t, oaCall{op: "listRules", method: "GET", path: "/v1/rules", want: 401, badRequest: true})
}

// oaHooks calls Claude Code's http hook; with no decision in its one second
// it answers PreToolUse's "ask", and nothing (204) to a PermissionRequest.
func oaHooks(t *testing.T, e *oaEnv) {
	in := func(event string) string {
		return `{"session_id":"s1","prompt_id":"p1","cwd":"/home/dev","permission_mode":"default","hook_event_name":"` + event +
			`","tool_name":"Bash","tool_input":{"command":"git push"},"tool_use_id":"toolu_1"}`
	}
	path := "/v1/hooks/claude-code?timeout=1"
	e.do(t, oaCall{op: "answerClaudeCodeHook", method: "POST", path: path, token: e.agent, body: in("PreToolUse"), want: 200})
	e.do(t, oaCall{op: "answerClaudeCodeHook", method: "POST", path: path, token: e.agent, body: in("PermissionRequest"), want: 204})
	// Nothing but a decision or no decision, with a 2xx: another event, a
	// refused token, a body that is not a hook's input.
	e.do(t, oaCall{op: "answerClaudeCodeHook", method: "POST", path: path, token: e.agent, body: in("Stop"), want: 204})
	e.do(t, oaCall{op: "answerClaudeCodeHook", method: "POST", path: path, token: "gh_unknown", body: in("PreToolUse"), want: 200})
	e.do(t, oaCall{op: "answerClaudeCodeHook", method: "POST", path: path, token: e.op, body: `{"hook_event_name":"Stop"}`, want: 204})
	e.do(t, oaCall{op: "answerClaudeCodeHook", method: "POST", path: path, body: `{"hook_event_name":`, want: 200, badRequest: true})
	for len(e.start) > 0 { // the waits above
		<-e.start
	}
}

func oaSessions(t *testing.T, e *oaEnv) {
	sess, _, err := e.Store.LoginWithToken(context.Background(), e.op)
	if err != nil {
		t.Fatal(err)
	}
	list := decodeAs[struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}](t, e.do(t, oaCall{op: "listSessions", method: "GET", path: "/v1/sessions", token: e.op, want: 200}))
	if len(list.Sessions) == 0 {
		t.Fatal("no session listed")
	}
	e.do(t, oaCall{op: "listSessions", method: "GET", path: "/v1/sessions", token: e.agent, want: 403})
	e.do(t, oaCall{op: "listSessions", method: "GET", path: "/v1/sessions", want: 401, badRequest: true})
	e.do(t, oaCall{op: "endSession", method: "DELETE", path: "/v1/sessions/" + sess.ID, token: e.rt, want: 403})
	e.do(t, oaCall{op: "endSession", method: "DELETE", path: "/v1/sessions/" + sess.ID, want: 401, badRequest: true})
	e.do(t, oaCall{op: "endSession", method: "DELETE", path: "/v1/sessions/" + sess.ID, token: e.op, want: 204})
	e.do(t, oaCall{op: "endSession", method: "DELETE", path: "/v1/sessions/" + sess.ID, token: e.op, want: 404})
}

func oaTokens(t *testing.T, e *oaEnv) {
	made := decodeAs[struct {
		ID string `json:"id"`
	}](t, e.do(t, oaCall{op: "createToken", method: "POST", path: "/v1/tokens", token: e.op, body: map[string]any{"role": "agent", "name": "oa-bot", "for": "op"}, want: 201}))
	e.do(t, oaCall{op: "createToken", method: "POST", path: "/v1/tokens", token: e.op, body: map[string]any{"role": "agent", "name": "oa-bot"}, want: 409})
	e.do(t, oaCall{op: "createToken", method: "POST", path: "/v1/tokens", token: e.op, body: map[string]any{"role": "root", "name": "x"}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "createToken", method: "POST", path: "/v1/tokens", token: e.op, body: map[string]any{"role": "agent", "name": "x", "secret": "y"}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "createToken", method: "POST", path: "/v1/tokens", token: e.op, body: map[string]any{"role": "agent", "name": strings.Repeat("x", 20000)}, want: 413})
	e.do(t, oaCall{op: "createToken", method: "POST", path: "/v1/tokens", token: e.agent, body: map[string]any{"role": "operator", "name": "m"}, want: 403})
	e.do(t, oaCall{op: "createToken", method: "POST", path: "/v1/tokens", body: map[string]any{"role": "operator", "name": "m"}, want: 401, badRequest: true})
	e.do(t, oaCall{op: "listTokens", method: "GET", path: "/v1/tokens", token: e.op, want: 200})
	e.do(t, oaCall{op: "createChatLinkCode", method: "POST", path: "/v1/chat/link-codes", token: e.op, want: 201})
	e.do(t, oaCall{op: "createChatLinkCode", method: "POST", path: "/v1/chat/link-codes", token: e.agent, want: 403})
	e.do(t, oaCall{op: "listTokens", method: "GET", path: "/v1/tokens", token: e.rt, want: 403})
	e.do(t, oaCall{op: "listTokens", method: "GET", path: "/v1/tokens", want: 401, badRequest: true})
	e.do(t, oaCall{op: "revokeToken", method: "DELETE", path: "/v1/tokens/" + made.ID, token: e.agent, want: 403})
	e.do(t, oaCall{op: "revokeToken", method: "DELETE", path: "/v1/tokens/" + made.ID, want: 401, badRequest: true})
	e.do(t, oaCall{op: "revokeToken", method: "DELETE", path: "/v1/tokens/" + made.ID, token: e.op, want: 200})
	e.do(t, oaCall{op: "revokeToken", method: "DELETE", path: "/v1/tokens/" + made.ID, token: e.op, want: 404})
}

func (e *oaEnv) file(t *testing.T, token string, body map[string]any) oaRecord {
	t.Helper()
	if body["options"] == nil && body["kind"] == nil {
		body["options"] = webtest.AllowDeny
	}
	return decodeAs[oaRecord](t, e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: token, body: body, want: 201}))
}

func oaRequests(t *testing.T, e *oaEnv) {
	r := e.file(t, e.agent, map[string]any{"title": "Run git push", "tool": "Bash", "command": "git push", "source_ref": map[string]string{"session": "s1"}})
	id := "/v1/requests/" + r.ID
	t.Run("file", func(t *testing.T) {
		key := map[string]string{"Idempotency-Key": "k-1"}
		body := map[string]any{"title": "Once only", "options": webtest.AllowDeny, "expires_in": 600}
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, header: key, body: body, want: 201})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, header: key, body: body, want: 200})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: map[string]any{"title": "x", "bogus": 1}, want: 400, badRequest: true})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: map[string]any{"title": "", "options": webtest.AllowDeny}, want: 400, badRequest: true})
		// Options are required but for the kinds that need none: the document says so too.
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: map[string]any{"title": "No options"}, want: 400, badRequest: true})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: map[string]any{"title": "A misspelt kind", "kind": "aproval", "options": webtest.AllowDeny}, want: 400, badRequest: true})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: map[string]any{"title": "Free answer", "kind": "question", "allow_answer": true}, want: 201})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", body: map[string]any{"title": "x", "options": webtest.AllowDeny}, want: 401, badRequest: true})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.op, body: map[string]any{"title": "x", "options": webtest.AllowDeny}, want: 403})
		e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: map[string]any{"title": "big", "options": webtest.AllowDeny, "detail": strings.Repeat("x", 20<<10)}, want: 413})
	})
	t.Run("read", func(t *testing.T) {
		e.do(t, oaCall{op: "listRequests", method: "GET", path: "/v1/requests?status=open&limit=5", token: e.agent, want: 200})
		e.do(t, oaCall{op: "listRequests", method: "GET", path: "/v1/requests", token: e.op, want: 200})
		e.do(t, oaCall{op: "listRequests", method: "GET", path: "/v1/requests?limit=0", token: e.op, want: 400, badRequest: true})
		e.do(t, oaCall{op: "listRequests", method: "GET", path: "/v1/requests", want: 401, badRequest: true})
		e.do(t, oaCall{op: "getRequest", method: "GET", path: id, token: e.agent, want: 200})
		e.do(t, oaCall{op: "getRequest", method: "GET", path: id, token: e.other, want: 404})
		e.do(t, oaCall{op: "getRequest", method: "GET", path: id, want: 401, badRequest: true})
		e.do(t, oaCall{op: "auditRequest", method: "GET", path: id + "/audit", token: e.op, want: 200})
		e.do(t, oaCall{op: "auditRequest", method: "GET", path: id + "/audit", token: e.agent, want: 403})
		e.do(t, oaCall{op: "auditRequest", method: "GET", path: "/v1/requests/req_nope/audit", token: e.op, want: 404})
		e.do(t, oaCall{op: "listAudit", method: "GET", path: "/v1/audit?after=0&limit=10", token: e.op, want: 200})
		e.do(t, oaCall{op: "listAudit", method: "GET", path: "/v1/audit?limit=0", token: e.op, want: 400, badRequest: true})
		e.do(t, oaCall{op: "listAudit", method: "GET", path: "/v1/audit", token: e.agent, want: 403})
		e.do(t, oaCall{op: "getAuditHead", method: "GET", path: "/v1/audit/head", token: e.op, want: 200})
		e.do(t, oaCall{op: "getAuditHead", method: "GET", path: "/v1/audit/head", token: e.agent, want: 403})
	})
	t.Run("patch", func(t *testing.T) {
		p := e.file(t, e.agent, map[string]any{"title": "Edit me", "sealed": false})
		path := "/v1/requests/" + p.ID
		e.do(t, oaCall{op: "patchRequest", method: "PATCH", path: path, token: e.agent, body: map[string]any{"version": p.Version, "summary": "now with detail"}, want: 200})
		e.do(t, oaCall{op: "patchRequest", method: "PATCH", path: path, token: e.agent, body: map[string]any{"version": p.Version, "summary": "stale"}, want: 409})
		e.do(t, oaCall{op: "patchRequest", method: "PATCH", path: path, token: e.other, body: map[string]any{"version": 2, "summary": "x"}, want: 404})
		e.do(t, oaCall{op: "patchRequest", method: "PATCH", path: path, token: e.op, body: map[string]any{"version": 2, "summary": "x"}, want: 403})
		e.do(t, oaCall{op: "patchRequest", method: "PATCH", path: path, token: e.agent, body: map[string]any{"version": "two"}, want: 400, badRequest: true})
	})
	t.Run("wait", func(t *testing.T) {
		e.do(t, oaCall{op: "waitRequest", method: "GET", path: id + "/wait?timeout=1", token: e.agent, want: 200})
		e.do(t, oaCall{op: "waitRequest", method: "GET", path: id + "/wait?timeout=0", token: e.agent, want: 400, badRequest: true})
		e.do(t, oaCall{op: "waitRequest", method: "GET", path: id + "/wait", token: e.other, want: 404})
		// Over the per-caller cap of one: the second wait is answered 429 at once.
		for len(e.start) > 0 {
			testkit.Recv(t, e.start, "the waits above to start")
		}
		ctx, cancel := context.WithCancel(context.Background())
		held := make(chan struct{})
		go func() {
			defer close(held)
			status, _ := e.DoCtx(ctx, "GET", id+"/wait?timeout=60", e.agent, nil)
			_ = status // ended by cancel
		}()
		select {
		case <-e.start:
		case <-time.After(10 * time.Second):
			t.Fatal("the first wait never started")
		}
		e.do(t, oaCall{op: "waitRequest", method: "GET", path: id + "/wait?timeout=60", token: e.agent, want: 429})
		cancel()
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("the held wait did not end when its client went away")
		}
	})
	t.Run("withdraw", func(t *testing.T) {
		c := e.file(t, e.agent, map[string]any{"title": "Cancel me"})
		path := "/v1/requests/" + c.ID
		e.do(t, oaCall{op: "cancelRequest", method: "POST", path: path + "/cancel", token: e.other, body: struct{}{}, want: 404})
		e.do(t, oaCall{op: "cancelRequest", method: "POST", path: path + "/cancel", token: e.agent, want: 200})
		e.do(t, oaCall{op: "cancelRequest", method: "POST", path: path + "/cancel", token: e.agent, body: struct{}{}, want: 409})
		e.do(t, oaCall{op: "cancelRequest", method: "POST", path: path + "/cancel", token: e.op, body: struct{}{}, want: 403})
		info := e.file(t, e.agent, map[string]any{"title": "Build finished", "kind": "waiting"})
		e.do(t, oaCall{op: "dismissRequest", method: "POST", path: "/v1/requests/" + info.ID + "/dismiss", token: e.op, body: struct{}{}, want: 200})
		e.do(t, oaCall{op: "dismissRequest", method: "POST", path: id + "/dismiss", token: e.op, body: struct{}{}, want: 409})
		e.do(t, oaCall{op: "dismissRequest", method: "POST", path: id + "/dismiss", token: e.agent, body: struct{}{}, want: 403})
		e.do(t, oaCall{op: "dismissRequest", method: "POST", path: "/v1/requests/req_nope/dismiss", token: e.op, body: struct{}{}, want: 404})
	})
}

func oaDecide(t *testing.T, e *oaEnv) {
	for _, route := range []struct{ op, name string }{{"decideRequest", "v1"}, {"decideAttention", "attention"}} {
		t.Run(route.name, func(t *testing.T) {
			call := func(id string, body map[string]any) oaCall {
				if route.op == "decideAttention" {
					if id != "" {
						body["requestId"] = id
					}
					return oaCall{op: route.op, method: "POST", path: "/api/operator-attention/permissions/decide", token: e.op, body: body}
				}
				return oaCall{op: route.op, method: "POST", path: "/v1/requests/" + id + "/decide", token: e.op, body: body}
			}
			with := func(c oaCall, want int, bad bool) oaCall { c.want, c.badRequest = want, bad; return c }
			r := e.file(t, e.agent, map[string]any{"title": "Decide me"})
			// The agent tries to approve its own request: refused.
			self := with(call(r.ID, map[string]any{"version": r.Version, "decision": "once"}), 403, false)
			self.token = e.agent
			e.do(t, self)
			e.do(t, with(call(r.ID, map[string]any{"version": r.Version, "decision": "forever"}), 422, false))
			e.do(t, with(call(r.ID, map[string]any{"version": r.Version + 7, "decision": "once"}), 409, false))
			e.do(t, with(call(r.ID, map[string]any{"decision": "once"}), 400, true))
			e.do(t, with(call(r.ID, map[string]any{"version": r.Version, "decision": "once", "note": "go ahead"}), 200, false))
			e.do(t, with(call(r.ID, map[string]any{"version": r.Version + 1, "decision": "deny"}), 409, false))
			e.do(t, with(call("req_nope", map[string]any{"version": 1, "decision": "once"}), 404, false))
			noAuth := with(call(r.ID, map[string]any{"version": 1, "decision": "once"}), 401, true)
			noAuth.token = ""
			e.do(t, noAuth)

			// Under a two-person policy the first vote answers the open record
			// with its approvals, and a second vote by the same operator is 409.
			two := e.file(t, e.agent, map[string]any{"title": "Two people", "approvers": map[string]any{"required": 2, "note": "required"}})
			e.do(t, with(call(two.ID, map[string]any{"version": two.Version, "decision": "once"}), 422, false))
			e.do(t, with(call(two.ID, map[string]any{"version": two.Version, "decision": "once", "note": "looks right"}), 200, false))
			e.do(t, with(call(two.ID, map[string]any{"version": two.Version + 1, "decision": "once", "note": "again"}), 409, false))

			// Expired: a wait runs out past the expiry, then the decide is 410.
			x := e.file(t, e.agent, map[string]any{"title": "Gone soon", "expires_in": 1})
			e.do(t, oaCall{op: "waitRequest", method: "GET", path: "/v1/requests/" + x.ID + "/wait?timeout=1", token: e.agent, want: 200})
			e.do(t, with(call(x.ID, map[string]any{"version": x.Version, "decision": "once"}), 410, false))
		})
	}
}

func oaRuntimes(t *testing.T, e *oaEnv) {
	if !e.wired(t, "GET", "/v1/runtimes", "getKeys", "registerRuntime", "listRuntimes", "feedDecisions") {
		testkit.Skipf(t, "webtest does not wire runtimes (Deps.Runtimes/Changes) yet: the assembly half of issue 13 does")
	}
	e.do(t, oaCall{op: "getKeys", method: "GET", path: "/v1/keys", want: 200})
	reg := map[string]any{"name": "laptop", "machine": "m1"}
	rt := decodeAs[oaRecord](t, e.do(t, oaCall{op: "registerRuntime", method: "POST", path: "/v1/runtimes", token: e.rt, body: reg, want: 201}))
	e.do(t, oaCall{op: "registerRuntime", method: "POST", path: "/v1/runtimes", token: e.rt, body: reg, want: 200})
	e.do(t, oaCall{op: "registerRuntime", method: "POST", path: "/v1/runtimes", token: e.rt, body: map[string]any{"name": "x", "machine": "m", "colour": "red"}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "registerRuntime", method: "POST", path: "/v1/runtimes", token: e.agent, body: reg, want: 403})
	e.do(t, oaCall{op: "listRuntimes", method: "GET", path: "/v1/runtimes", token: e.op, want: 200})
	e.do(t, oaCall{op: "listRuntimes", method: "GET", path: "/v1/runtimes", token: e.rt, want: 200})
	e.do(t, oaCall{op: "listRuntimes", method: "GET", path: "/v1/runtimes", token: e.agent, want: 403})

	// A decision on the runtime's request is in its feed at once.
	r := e.file(t, e.rt, map[string]any{"title": "Deploy", "runtime_id": rt.ID})
	e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + r.ID + "/decide", token: e.op, body: map[string]any{"version": r.Version, "decision": "once"}, want: 200})
	feed := "/v1/runtimes/" + rt.ID + "/decisions"
	e.do(t, oaCall{op: "feedDecisions", method: "GET", path: feed + "?timeout=1", token: e.rt, want: 200})
	e.do(t, oaCall{op: "feedDecisions", method: "GET", path: feed + "?after=x", token: e.rt, want: 400})
	e.do(t, oaCall{op: "feedDecisions", method: "GET", path: feed + "?timeout=900", token: e.rt, want: 400, badRequest: true})
	e.do(t, oaCall{op: "feedDecisions", method: "GET", path: "/v1/runtimes/rt_nope/decisions", token: e.rt, want: 404})
	e.do(t, oaCall{op: "feedDecisions", method: "GET", path: feed, token: e.op, want: 403})
}

func oaPending(t *testing.T, e *oaEnv) {
	if !e.wired(t, "GET", "/v1/pending/p_probe", "filePending", "claimPending", "getPending", "waitPending") {
		testkit.Skipf(t, "webtest does not wire pending grants (Deps.Grants) yet: the assembly half of issue 13 does")
	}
	target := func(path string) map[string]any {
		return map[string]any{"sandbox": "sb1", "policy": "egress", "middleware": "mw", "method": "POST", "host": "api.example.com",
			"port": 443, "path": path, "query": "a=1", "body_sha256": strings.Repeat("ab", 32)}
	}
	filed := decodeAs[struct {
		PendingID string `json:"pending_id"`
		RequestID string `json:"request_id"`
	}](t, e.do(t, oaCall{op: "filePending", method: "POST", path: "/v1/pending", token: e.rt, body: target("/v1/charge"), want: 201}))
	e.do(t, oaCall{op: "filePending", method: "POST", path: "/v1/pending", token: e.agent, body: target("/x"), want: 403})
	e.do(t, oaCall{op: "filePending", method: "POST", path: "/v1/pending", token: e.rt, body: map[string]any{"sandbox": "sb1", "port": "443"}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "getPending", method: "GET", path: "/v1/pending/" + filed.PendingID, token: e.rt, want: 200})
	e.do(t, oaCall{op: "getPending", method: "GET", path: "/v1/pending/p_nope", token: e.rt, want: 404})
	e.do(t, oaCall{op: "getPending", method: "GET", path: "/v1/pending/" + filed.PendingID, token: e.op, want: 403})
	e.do(t, oaCall{op: "waitPending", method: "GET", path: "/v1/pending/" + filed.PendingID + "/wait?timeout=1", token: e.rt, want: 200})
	e.do(t, oaCall{op: "waitPending", method: "GET", path: "/v1/pending/" + filed.PendingID + "/wait?timeout=0", token: e.rt, want: 400, badRequest: true})
	e.do(t, oaCall{op: "claimPending", method: "POST", path: "/v1/pending/claim", token: e.rt, body: target("/v1/charge"), want: 409})

	// The runtime (the agent's side) tries to approve its own grant: refused.
	req := decodeAs[struct {
		Version int `json:"version"`
		Options []struct {
			ID     string `json:"id"`
			Effect string `json:"effect"`
		} `json:"options"`
	}](t, e.do(t, oaCall{op: "getRequest", method: "GET", path: "/v1/requests/" + filed.RequestID, token: e.op, want: 200}))
	option := func(effect string) string {
		for _, o := range req.Options {
			if o.Effect == effect {
				return o.ID
			}
		}
		t.Fatalf("the grant's request offers no %s option: %+v", effect, req.Options)
		return ""
	}
	e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + filed.RequestID + "/decide", token: e.rt, body: map[string]any{"version": req.Version, "decision": option("allow")}, want: 403})
	e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + filed.RequestID + "/decide", token: e.op, body: map[string]any{"version": req.Version, "decision": option("allow")}, want: 200})
	e.do(t, oaCall{op: "claimPending", method: "POST", path: "/v1/pending/claim", token: e.rt, body: target("/v1/charge"), want: 200})
	e.do(t, oaCall{op: "claimPending", method: "POST", path: "/v1/pending/claim", token: e.rt, body: target("/v1/charge"), want: 404})

	denied := decodeAs[struct {
		RequestID string `json:"request_id"`
	}](t, e.do(t, oaCall{op: "filePending", method: "POST", path: "/v1/pending", token: e.rt, body: target("/v1/refund"), want: 201}))
	e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + denied.RequestID + "/decide", token: e.op, body: map[string]any{"version": req.Version, "decision": option("deny")}, want: 200})
	e.do(t, oaCall{op: "claimPending", method: "POST", path: "/v1/pending/claim", token: e.rt, body: target("/v1/refund"), want: 403})
	e.do(t, oaCall{op: "claimPending", method: "POST", path: "/v1/pending/claim", token: e.agent, body: target("/v1/refund"), want: 403})
}

func oaDevices(t *testing.T, e *oaEnv) {
	if !e.wired(t, "GET", "/v1/devices", "listDevices", "registerDevice", "dropDevice", "webPushKey", "subscribeWebPush", "unsubscribeWebPush") {
		testkit.Skipf(t, "webtest does not wire push devices (Deps.Devices) yet: the assembly half of issue 13 does")
	}
	token := fmt.Sprintf("%064x", 42)
	dev := map[string]any{"token": token, "name": "phone"}
	e.do(t, oaCall{op: "registerDevice", method: "POST", path: "/v1/devices", token: e.op, body: dev, want: 201})
	e.do(t, oaCall{op: "registerDevice", method: "POST", path: "/v1/devices", token: e.op, body: dev, want: 200})
	e.do(t, oaCall{op: "registerDevice", method: "POST", path: "/v1/devices", token: e.op, body: map[string]any{"token": token, "kind": "webpush"}, want: 400})
	e.do(t, oaCall{op: "registerDevice", method: "POST", path: "/v1/devices", token: e.agent, body: dev, want: 403})
	e.do(t, oaCall{op: "listDevices", method: "GET", path: "/v1/devices", token: e.op, want: 200})
	e.do(t, oaCall{op: "listDevices", method: "GET", path: "/v1/devices", token: e.agent, want: 403})
	e.do(t, oaCall{op: "dropDevice", method: "DELETE", path: "/v1/devices/" + token, token: e.op, want: 204})
	e.do(t, oaCall{op: "dropDevice", method: "DELETE", path: "/v1/devices/" + token, token: e.op, want: 404})
	e.do(t, oaCall{op: "webPushKey", method: "GET", path: "/v1/webpush/key", token: e.op, want: 200})
	sub := map[string]any{"endpoint": "https://push.example.com/send/abcdef123456", "keys": map[string]string{"p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM", "auth": "tBHItJI5svbpez7KI4CCXg"}}
	e.do(t, oaCall{op: "subscribeWebPush", method: "POST", path: "/v1/webpush/subscribe", token: e.op, body: sub, want: 201})
	e.do(t, oaCall{op: "subscribeWebPush", method: "POST", path: "/v1/webpush/subscribe", token: e.op, body: map[string]any{"endpoint": 7}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "unsubscribeWebPush", method: "POST", path: "/v1/webpush/unsubscribe", token: e.op, body: map[string]any{"endpoint": sub["endpoint"]}, want: 204})
	e.do(t, oaCall{op: "unsubscribeWebPush", method: "POST", path: "/v1/webpush/unsubscribe", token: e.op, body: map[string]any{"endpoint": ""}, want: 400})
}

func oaAvailability(t *testing.T, e *oaEnv) {
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	e.do(t, oaCall{op: "getAvailability", method: "GET", path: "/v1/me/availability", token: e.op, want: 200})
	e.do(t, oaCall{op: "getAvailability", method: "GET", path: "/v1/me/availability", token: e.agent, want: 403})
	e.do(t, oaCall{op: "getAvailability", method: "GET", path: "/v1/me/availability", want: 401, badRequest: true})
	e.do(t, oaCall{op: "putAway", method: "PUT", path: "/v1/me/away", token: e.op, body: map[string]any{"away": true, "until": until}, want: 200})
	e.do(t, oaCall{op: "putAway", method: "PUT", path: "/v1/me/away", token: e.op, body: map[string]any{"away": false}, want: 200})
	e.do(t, oaCall{op: "putAway", method: "PUT", path: "/v1/me/away", token: e.op, body: map[string]any{"away": true, "who": "x"}, want: 400, badRequest: true})
	e.do(t, oaCall{op: "putAway", method: "PUT", path: "/v1/me/away", token: e.op, body: map[string]any{"away": true, "pad": strings.Repeat("x", 20000)}, want: 413, badRequest: true})
	e.do(t, oaCall{op: "putAway", method: "PUT", path: "/v1/me/away", token: e.agent, body: map[string]any{"away": true}, want: 403})
	e.do(t, oaCall{op: "putAway", method: "PUT", path: "/v1/me/away", body: map[string]any{"away": true}, want: 401, badRequest: true})
	e.do(t, oaCall{op: "putQuietHours", method: "PUT", path: "/v1/me/quiet-hours", token: e.op, body: map[string]any{"start": "22:00", "end": "07:00", "tz": "Europe/Berlin"}, want: 200})
	e.do(t, oaCall{op: "putQuietHours", method: "PUT", path: "/v1/me/quiet-hours", token: e.op, body: map[string]any{"start": "22:00", "end": "07:00", "tz": "Nowhere"}, want: 400})
	e.do(t, oaCall{op: "putQuietHours", method: "PUT", path: "/v1/me/quiet-hours", token: e.op, body: map[string]any{"start": "22:00", "end": "07:00", "tz": "UTC", "pad": strings.Repeat("x", 20000)}, want: 413, badRequest: true})
	e.do(t, oaCall{op: "putQuietHours", method: "PUT", path: "/v1/me/quiet-hours", token: e.rt, body: map[string]any{"start": "22:00", "end": "07:00", "tz": "UTC"}, want: 403})
	e.do(t, oaCall{op: "putQuietHours", method: "PUT", path: "/v1/me/quiet-hours", body: map[string]any{"start": "22:00", "end": "07:00", "tz": "UTC"}, want: 401, badRequest: true})
	e.do(t, oaCall{op: "clearQuietHours", method: "DELETE", path: "/v1/me/quiet-hours", token: e.op, want: 200})
	e.do(t, oaCall{op: "clearQuietHours", method: "DELETE", path: "/v1/me/quiet-hours", token: e.agent, want: 403})
	e.do(t, oaCall{op: "clearQuietHours", method: "DELETE", path: "/v1/me/quiet-hours", want: 401, badRequest: true})
}

func oaRemembered(t *testing.T, e *oaEnv) {
	r := e.file(t, e.agent, map[string]any{"title": "Run the tests", "tool": "Bash", "command": "npm test", "source_ref": map[string]string{"session": "s-oa"}})
	body := map[string]any{"version": r.Version, "decision": "once", "remember": map[string]any{"scope": "session", "for": "1h"}}
	got := decodeAs[struct {
		Remembered struct {
			ID string `json:"id"`
		} `json:"remembered"`
	}](t, e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + r.ID + "/decide", token: e.op, body: body, want: 200}))
	if got.Remembered.ID == "" {
		t.Fatal("the decide stored no remembered allow")
	}
	e.do(t, oaCall{op: "listRemembered", method: "GET", path: "/v1/remembered", token: e.op, want: 200})
	e.do(t, oaCall{op: "listRemembered", method: "GET", path: "/v1/remembered", token: e.agent, want: 403})
	e.do(t, oaCall{op: "listRemembered", method: "GET", path: "/v1/remembered", want: 401, badRequest: true})
	e.do(t, oaCall{op: "revokeRemembered", method: "DELETE", path: "/v1/remembered/" + got.Remembered.ID, token: e.agent, want: 403})
	e.do(t, oaCall{op: "revokeRemembered", method: "DELETE", path: "/v1/remembered/" + got.Remembered.ID, want: 401, badRequest: true})
	e.do(t, oaCall{op: "revokeRemembered", method: "DELETE", path: "/v1/remembered/" + got.Remembered.ID, token: e.op, want: 200})
	e.do(t, oaCall{op: "revokeRemembered", method: "DELETE", path: "/v1/remembered/" + got.Remembered.ID, token: e.op, want: 200})
	e.do(t, oaCall{op: "revokeRemembered", method: "DELETE", path: "/v1/remembered/rem_nope", token: e.op, want: 404})
}

func oaSuggestions(t *testing.T, e *oaEnv) {
	ids := map[string]string{}
	for _, cmd := range []string{"make test", "make docs"} {
		for range 3 {
			r := e.file(t, e.agent, map[string]any{"title": "Run " + cmd, "tool": "Bash", "command": cmd, "source_ref": map[string]string{"session": "s-oa", "cwd": "/oa"}})
			e.do(t, oaCall{op: "decideRequest", method: "POST", path: "/v1/requests/" + r.ID + "/decide", token: e.op, body: map[string]any{"version": r.Version, "decision": "once"}, want: 200})
		}
	}
	list := decodeAs[struct {
		Suggestions []struct {
			ID    string `json:"id"`
			Grant struct {
				Match string `json:"match"`
			} `json:"grant"`
		} `json:"suggestions"`
	}](t, e.do(t, oaCall{op: "listSuggestions", method: "GET", path: "/v1/suggestions", token: e.op, want: 200}))
	for _, g := range list.Suggestions {
		ids[g.Grant.Match] = g.ID
	}
	test, docs := "/v1/suggestions/"+ids[`^make test$`], "/v1/suggestions/"+ids[`^make docs$`]
	if ids[`^make test$`] == "" || ids[`^make docs$`] == "" {
		t.Fatalf("not proposed: %v", ids)
	}
	e.do(t, oaCall{op: "listSuggestions", method: "GET", path: "/v1/suggestions", token: e.agent, want: 403})
	e.do(t, oaCall{op: "listSuggestions", method: "GET", path: "/v1/suggestions", want: 401, badRequest: true})
	e.do(t, oaCall{op: "acceptSuggestion", method: "POST", path: test + "/accept", token: e.agent, want: 403})
	e.do(t, oaCall{op: "acceptSuggestion", method: "POST", path: test + "/accept", want: 401, badRequest: true})
	e.do(t, oaCall{op: "acceptSuggestion", method: "POST", path: test + "/accept", token: e.op, body: map[string]any{"for": "2y"}, want: 400})
	e.do(t, oaCall{op: "acceptSuggestion", method: "POST", path: test + "/accept", token: e.op, body: map[string]any{"for": "1h", "pad": strings.Repeat("x", 20000)}, want: 413, badRequest: true})
	e.do(t, oaCall{op: "acceptSuggestion", method: "POST", path: test + "/accept", token: e.op, body: map[string]any{"for": "1h"}, want: 200})
	e.do(t, oaCall{op: "acceptSuggestion", method: "POST", path: test + "/accept", token: e.op, want: 409})
	e.do(t, oaCall{op: "acceptSuggestion", method: "POST", path: "/v1/suggestions/sug_nope/accept", token: e.op, want: 404})
	e.do(t, oaCall{op: "dismissSuggestion", method: "POST", path: docs + "/dismiss", token: e.rt, want: 403})
	e.do(t, oaCall{op: "dismissSuggestion", method: "POST", path: docs + "/dismiss", want: 401, badRequest: true})
	e.do(t, oaCall{op: "dismissSuggestion", method: "POST", path: docs + "/dismiss", token: e.op, want: 200})
	e.do(t, oaCall{op: "dismissSuggestion", method: "POST", path: docs + "/dismiss", token: e.op, want: 200})
	e.do(t, oaCall{op: "dismissSuggestion", method: "POST", path: test + "/dismiss", token: e.op, want: 409})
	e.do(t, oaCall{op: "dismissSuggestion", method: "POST", path: "/v1/suggestions/sug_nope/dismiss", token: e.op, want: 404})
}

// oaLimits validates the answers of a caller over its filing allowance (429
// filing_too_fast with Retry-After) and of a server whose database is gone
// (/healthz 503 unavailable with Retry-After), on a server of their own.
func oaLimits(t *testing.T, dialect string) {
	e := newOAEnvWith(t, dialect, web.Config{FilingRate: 0.001, FilingBurst: 1})
	body := map[string]any{"title": "Once", "options": webtest.AllowDeny}
	e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: body, want: 201})
	got := decodeAs[struct {
		Error string `json:"error"`
	}](t, e.do(t, oaCall{op: "fileRequest", method: "POST", path: "/v1/requests", token: e.agent, body: body, want: 429}))
	if got.Error != "filing_too_fast" {
		t.Fatalf("the second filing: %q, want filing_too_fast", got.Error)
	}
	sqlDB, err := e.Store.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.Close(); err != nil {
		t.Fatal(err)
	}
	e.do(t, oaCall{op: "healthz", method: "GET", path: "/healthz", want: 503})
}
