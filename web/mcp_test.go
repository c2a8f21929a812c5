package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

type mcpEnv struct {
	t *testing.T
	*webtest.Env
	watched  chan struct{} // a wait started waiting on the change announcement
	ended    chan struct{} // a wait let go of its slot
	operator *client.Client
	tokens   map[string]string // name -> secret
}

// newMCPEnv serves a real Gatehouse on SQLite. It first registers a goroutine
// check, so it runs last: after the server, the clients and the database close.
func newMCPEnv(t *testing.T, cfg web.Config) *mcpEnv {
	t.Helper()
	return newMCPEnvOn(t, "sqlite", cfg)
}

func newMCPEnvOn(t *testing.T, dialect string, cfg web.Config) *mcpEnv {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
	watched, ended := make(chan struct{}, 64), make(chan struct{}, 64)
	cfg.OnWaitStart = func() { watched <- struct{}{} }
	cfg.OnWaitEnd = func() {
		select { // never hold the server up: only a few tests read it
		case ended <- struct{}{}:
		default:
		}
	}
	env := &mcpEnv{t: t, Env: webtest.New(t, dialect, cfg), watched: watched, ended: ended, tokens: map[string]string{}}
	for _, tk := range []struct{ role, name string }{{models.RoleAgent, "a1"}, {models.RoleAgent, "a2"}, {models.RoleRuntime, "rt"}, {models.RoleOperator, "op"}} {
		env.tokens[tk.name] = env.Token(tk.role, tk.name)
	}
	env.operator = client.New(env.URL, env.tokens["op"])
	return env
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens an MCP session with the SDK's own client as token name,
// speaking protocol version (empty: the SDK's newest).
func (e *mcpEnv) connect(name, version string) *mcp.ClientSession {
	e.t.Helper()
	tr := &http.Transport{}
	hc := &http.Client{Transport: bearer{e.tokens[name], tr}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close(); tr.CloseIdleConnections() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// out decodes a successful tool result's structured content.
func out[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	var v T
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type mcpWaitResult struct {
	Waited  int         `json:"waited"`
	Decided bool        `json:"decided"`
	Request api.Request `json:"request"`
}

// file files an approval through MCP and returns its id.
func file(t *testing.T, cs *mcp.ClientSession, title string) string {
	t.Helper()
	r := out[api.Request](t, callTool(t, cs, "request_approval", map[string]any{"title": title}))
	if r.ID == "" || r.Status != "open" || r.Version != 1 {
		t.Fatalf("request_approval answered %+v", r)
	}
	return r.ID
}

func (e *mcpEnv) decide(id, option, note string) {
	e.t.Helper()
	if _, err := e.operator.Decide(context.Background(), id, 1, option, note); err != nil {
		e.t.Fatal(err)
	}
}

// asyncCall runs a tool call in the background.
func asyncCall(ctx context.Context, cs *mcp.ClientSession, name string, args any) <-chan *mcp.CallToolResult {
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "call failed: " + err.Error()}}}
		}
		done <- res
	}()
	return done
}

// Protocol versions the tests speak: the SDK's newest, and the one most
// deployed clients speak (no request-scoped cancellation on the wire).
var protocols = []string{"", "2025-06-18"}

func eachProtocol(t *testing.T, f func(t *testing.T, version string)) {
	for _, v := range protocols {
		name := v
		if name == "" {
			name = "newest"
		}
		t.Run(name, func(t *testing.T) { f(t, v) })
	}
}

func TestMCPRequestApproval(t *testing.T) {
	t.Run("defaults to allow and deny", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{})
		cs := env.connect("a1", "")
		r := out[api.Request](t, callTool(t, cs, "request_approval", map[string]any{"title": "Drop the staging table", "summary": "cleanup", "expires_in": 600}))
		want := []api.Option{{ID: "allow", Label: "Allow", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
		if len(r.Options) != 2 || r.Options[0] != want[0] || r.Options[1] != want[1] {
			t.Fatalf("options = %+v", r.Options)
		}
		if r.Kind != "approval" || r.CreatedBy != "agent:a1" || r.Summary != "cleanup" {
			t.Fatalf("record = %+v", r)
		}
	})
	t.Run("bad input is an error the model reads and files nothing", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{})
		cs := env.connect("a1", "")
		res := callTool(t, cs, "request_approval", map[string]any{"title": "x", "options": []map[string]any{{"id": "Bad Id", "label": "x"}}})
		if !res.IsError || !strings.Contains(text(res), "invalid_input") {
			t.Fatalf("got %v %q", res.IsError, text(res))
		}
		if n, _ := env.Store.CountOpen(context.Background()); n != 0 {
			t.Fatalf("%d requests filed from bad input", n)
		}
	})
	t.Run("an option named against its effect is misleading_option and files nothing", func(t *testing.T) {
		env := newMCPEnv(t, web.Config{})
		cs := env.connect("a1", "")
		res := callTool(t, cs, "request_approval", map[string]any{"title": "git push --force origin main",
			"options": []map[string]any{{"id": "deny", "label": "Deny", "effect": "allow"}, {"id": "no", "label": "No", "effect": "deny"}}})
		if !res.IsError || !strings.Contains(text(res), "misleading_option") || !strings.Contains(text(res), "options[0].id") {
			t.Fatalf("got %v %q", res.IsError, text(res))
		}
		if n, _ := env.Store.CountOpen(context.Background()); n != 0 {
			t.Fatalf("%d requests filed", n)
		}
	})
}

func TestMCPWaitForDecision(t *testing.T) {
	eachProtocol(t, func(t *testing.T, version string) {
		t.Run("a waiter is woken by a decide", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{})
			cs := env.connect("a1", version)
			id := file(t, cs, "Deploy to production")
			done := asyncCall(context.Background(), cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60})
			testkit.Recv(t, env.watched, "the wait to start watching")
			env.decide(id, "allow", "go ahead, watch the error rate")
			w := out[mcpWaitResult](t, testkit.Recv(t, done, "the call to end"))
			if !w.Decided || w.Request.Decision == nil || *w.Request.Decision != "allow" || w.Request.Note == nil || *w.Request.Note != "go ahead, watch the error rate" {
				t.Fatalf("woken with %+v", w)
			}
			if w.Waited >= 60 {
				t.Fatalf("waited %d: a decide must wake the waiter", w.Waited)
			}
		})
		t.Run("a timeout says so", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{})
			cs := env.connect("a1", version)
			id := file(t, cs, "Rotate keys")
			res := callTool(t, cs, "wait_for_decision", map[string]any{"id": id, "seconds": 1})
			w := out[mcpWaitResult](t, res)
			if w.Decided || w.Waited != 1 || w.Request.Status != "open" || w.Request.ID != id {
				t.Fatalf("timeout answered %+v", w)
			}
		})
		t.Run("already decided is answered at once", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{})
			cs := env.connect("a1", version)
			id := file(t, cs, "Merge PR")
			env.decide(id, "deny", "")
			w := out[mcpWaitResult](t, callTool(t, cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60}))
			if !w.Decided || w.Waited != 0 || w.Request.Effect() != "deny" {
				t.Fatalf("got %+v", w)
			}
			select {
			case <-env.watched:
				t.Fatal("a settled request was waited on: it must be answered at once")
			default:
			}
		})
		t.Run("seconds outside 1..60 is refused", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{})
			cs := env.connect("a1", version)
			id := file(t, cs, "x")
			for _, s := range []int{0, 61} {
				res := callTool(t, cs, "wait_for_decision", map[string]any{"id": id, "seconds": s})
				if !res.IsError || !strings.Contains(text(res), "1 to 60") {
					t.Fatalf("seconds %d: %v %q", s, res.IsError, text(res))
				}
			}
		})
		t.Run("over the cap it refuses at once in words a model acts on", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{MaxWaitersPerCaller: 1})
			cs := env.connect("a1", version)
			held, other := file(t, cs, "first"), file(t, cs, "second")
			done := asyncCall(context.Background(), cs, "wait_for_decision", map[string]any{"id": held, "seconds": 60})
			testkit.Recv(t, env.watched, "the wait to start watching")
			res := callTool(t, cs, "wait_for_decision", map[string]any{"id": other, "seconds": 60})
			if !res.IsError || !strings.Contains(text(res), "too many waits") || !strings.Contains(text(res), "call again in 5 seconds") {
				t.Fatalf("over the cap: %v %q", res.IsError, text(res))
			}
			env.decide(held, "allow", "")
			if w := out[mcpWaitResult](t, testkit.Recv(t, done, "the call to end")); !w.Decided {
				t.Fatalf("held wait: %+v", w)
			}
			// The slot is free again.
			env.decide(other, "allow", "")
			if w := out[mcpWaitResult](t, callTool(t, cs, "wait_for_decision", map[string]any{"id": other, "seconds": 60})); !w.Decided {
				t.Fatalf("after release: %+v", w)
			}
		})
	})
}

func TestMCPUnknownAndForeignIDs(t *testing.T) {
	env := newMCPEnv(t, web.Config{})
	mine := env.connect("a1", "")
	theirs := env.connect("a2", "")
	foreign := file(t, mine, "Mine only")
	const missing = "req_doesnotexist0000000000"
	for _, tool := range []string{"get_request", "wait_for_decision"} {
		t.Run(tool, func(t *testing.T) {
			args := func(id string) map[string]any {
				if tool == "wait_for_decision" {
					return map[string]any{"id": id, "seconds": 5}
				}
				return map[string]any{"id": id}
			}
			a := callTool(t, theirs, tool, args(foreign))
			b := callTool(t, theirs, tool, args(missing))
			if !a.IsError || !b.IsError {
				t.Fatalf("errors: foreign %v, missing %v", a.IsError, b.IsError)
			}
			if strings.ReplaceAll(text(a), foreign, "ID") != strings.ReplaceAll(text(b), missing, "ID") {
				t.Fatalf("another caller's id is told apart from a missing one:\n%q\n%q", text(a), text(b))
			}
		})
	}
}

func TestMCPNotifyAndConsult(t *testing.T) {
	env := newMCPEnv(t, web.Config{})
	cs := env.connect("rt", "")
	t.Run("notify_operator files a silent item", func(t *testing.T) {
		id := out[struct{ ID string }](t, callTool(t, cs, "notify_operator", map[string]any{"message": "Nightly import finished: 1,204 rows"})).ID
		r, err := env.operator.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != "waiting" || r.Title != "Nightly import finished: 1,204 rows" || len(r.Options) != 0 || r.Status != "open" {
			t.Fatalf("notify filed %+v", r)
		}
	})
	t.Run("consult_operator answers at once and a later reply is readable", func(t *testing.T) {
		id := out[struct{ ID string }](t, callTool(t, cs, "consult_operator", map[string]any{"question": "Use the v2 schema for new tables?", "default_action": "keep using v1"})).ID
		r := out[api.Request](t, callTool(t, cs, "get_request", map[string]any{"id": id}))
		if r.Kind != "question" || !r.AllowAnswer || r.Status != "open" || !strings.Contains(r.Summary, "keep using v1") {
			t.Fatalf("consult filed %+v", r)
		}
		answer := "yes, v2 from now on"
		if err := env.operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+id+"/decide", nil, map[string]any{"version": 1, "answer": answer}, nil); err != nil {
			t.Fatal(err)
		}
		r = out[api.Request](t, callTool(t, cs, "get_request", map[string]any{"id": id}))
		if r.Status != "resolved" || r.Answer == nil || *r.Answer != answer {
			t.Fatalf("after the reply: %+v", r)
		}
	})
}

func TestMCPAuth(t *testing.T) {
	env := newMCPEnv(t, web.Config{})
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	for _, tc := range []struct {
		name, token string
		status      int
	}{{"no token", "", http.StatusUnauthorized}, {"wrong token", "nope", http.StatusUnauthorized}, {"operator", env.tokens["op"], http.StatusForbidden}, {"agent", env.tokens["a1"], http.StatusOK}} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, env.URL+"/mcp", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := env.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// TestMCPWaitReleased: a wait ends, and its slot and goroutines go, when the
// client aborts and when the server stops (newMCPEnv checks for goroutines).
func TestMCPWaitReleased(t *testing.T) {
	eachProtocol(t, func(t *testing.T, version string) {
		t.Run("client aborts", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{MaxWaitersPerCaller: 1})
			cs := env.connect("a1", version)
			id := file(t, cs, "Abort me")
			ctx, cancel := context.WithCancel(context.Background())
			done := asyncCall(ctx, cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60})
			testkit.Recv(t, env.watched, "the wait to start watching")
			cancel()
			testkit.Recv(t, done, "the call to end")
			testkit.Recv(t, env.ended, "the server to give the wait slot back") // the server saw the client go and gave the slot back
			// The slot came back: a new wait under a cap of one is admitted.
			again := asyncCall(context.Background(), cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60})
			testkit.Recv(t, env.watched, "the wait to start watching")
			env.decide(id, "allow", "")
			if w := out[mcpWaitResult](t, testkit.Recv(t, again, "the second wait to end")); !w.Decided {
				t.Fatalf("second wait: %+v", w)
			}
		})
		t.Run("the HTTP request is dropped", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{MaxWaitersPerCaller: 1})
			cs := env.connect("a1", version)
			id := file(t, cs, "Drop me")
			// A raw tools/call whose connection goes away mid-wait.
			v := version
			if v == "" {
				v = "2025-06-18"
			}
			body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait_for_decision","arguments":{"id":"` + id + `","seconds":60}}}`)
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.URL+"/mcp", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", v)
			req.Header.Set("Authorization", "Bearer "+env.tokens["a1"])
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			errc := make(chan error, 1)
			go func() {
				resp, err := tr.RoundTrip(req)
				if err == nil {
					_, err = resp.Body.Read(make([]byte, 1))
					resp.Body.Close()
				}
				errc <- err
			}()
			testkit.Recv(t, env.watched, "the wait to start watching")
			cancel()
			testkit.Recv(t, errc, "the dropped request to end")
			testkit.Recv(t, env.ended, "the server to give the wait slot back") // the server saw the connection go and gave the slot back
			again := asyncCall(context.Background(), cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60})
			testkit.Recv(t, env.watched, "the wait to start watching")
			env.decide(id, "allow", "")
			if w := out[mcpWaitResult](t, testkit.Recv(t, again, "the second wait to end")); !w.Decided {
				t.Fatalf("second wait: %+v", w)
			}
		})
		t.Run("the server stops", func(t *testing.T) {
			env := newMCPEnv(t, web.Config{})
			cs := env.connect("a1", version)
			id := file(t, cs, "Shut down")
			done := asyncCall(context.Background(), cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60})
			testkit.Recv(t, env.watched, "the wait to start watching")
			env.Server.Close()
			w := out[mcpWaitResult](t, testkit.Recv(t, done, "the call to end"))
			if w.Decided || w.Request.Status != "open" {
				t.Fatalf("at shutdown: %+v", w)
			}
		})
	})
}

// TestMCPEachDatabase: the wait is woken by a decide on both stores.
func TestMCPEachDatabase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		env := newMCPEnvOn(t, dialect, web.Config{})
		cs := env.connect("a1", "")
		id := file(t, cs, "Deploy")
		done := asyncCall(context.Background(), cs, "wait_for_decision", map[string]any{"id": id, "seconds": 60})
		testkit.Recv(t, env.watched, "the wait to start watching")
		env.decide(id, "deny", "")
		if w := out[mcpWaitResult](t, testkit.Recv(t, done, "the call to end")); !w.Decided || w.Request.Effect() != "deny" {
			t.Fatalf("woken with %+v", w)
		}
	})
}
