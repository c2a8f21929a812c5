package conformance_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Words in a title that the rules file below turns into an approval policy:
// the bridges' filings carry none of their own, so a require rule gives
// them the policy a REST filer writes in approvers. No other filing names
// them.
const (
	twoPersonWord   = "conformance-two-person"
	releaseOnlyWord = "conformance-release-only"
)

const rulesFile = `rules:
  - name: two-person
    match: {text: '` + twoPersonWord + `'}
    action: require
    approvers: {required: 2}
  - name: release-only
    match: {text: '` + releaseOnlyWord + `'}
    action: require
    approvers: {groups: [release], required: 1}
`

// gatehouse is one running service for one surface's column of the table:
// an agent that files, and three operators — alice and bob approve for
// release, carol is in no group a release-only policy names.
type gatehouse struct {
	*webtest.Env
	agent string
	ops   map[string]string // name -> operator token
}

// Who acts in a case.
const (
	approver = "alice" // an operator the policy admits (linked in chat)
	outsider = "carol" // an operator outside the policy's groups (linked in chat)
	stranger = ""      // no operator: an unlinked chat user, or the agent's own token
)

// newGatehouse starts the service as serve does, on a fresh database of
// dialect, with the rules above and, when given, a chat file; sent hears of
// every chat send.
func newGatehouse(t *testing.T, dialect, chatFile string, sent func(store.ChatMessage, store.ChatSend)) *gatehouse {
	t.Helper()
	cfg := app.Config{Database: storetest.URL(t, dialect), RulesFile: writeFile(t, "rules.yaml", rulesFile), ChatSent: sent}
	if chatFile != "" {
		cfg.ChatFile = writeFile(t, "chat.yaml", chatFile)
	}
	e := webtest.NewApp(t, cfg)
	g := &gatehouse{Env: e, agent: e.Token(models.RoleAgent, "conformance-agent"), ops: map[string]string{}}
	for name, groups := range map[string][]string{"alice": {"release"}, "bob": {"release"}, "carol": {"sre"}} {
		g.ops[name] = e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: name, Groups: groups})
	}
	return g
}

func writeFile(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// token is who's bearer token: an operator's, or the agent's for the stranger.
func (g *gatehouse) token(who string) string {
	if who == stranger {
		return g.agent
	}
	return g.ops[who]
}

// record reads a request as an operator reads it.
func (g *gatehouse) record(t testing.TB, id string) map[string]any {
	t.Helper()
	status, body := g.Do(http.MethodGet, "/v1/requests/"+id, g.ops["bob"], nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", id, status, body)
	}
	return webtest.JSON(t, body)
}

// auditLen is how many audit entries the request has.
func (g *gatehouse) auditLen(t testing.TB, id string) int {
	t.Helper()
	status, body := g.Do(http.MethodGet, "/v1/requests/"+id+"/audit", g.ops["bob"], nil)
	if status != http.StatusOK {
		t.Fatalf("audit of %s: %d %s", id, status, body)
	}
	entries, _ := webtest.JSON(t, body)["entries"].([]any)
	return len(entries)
}

// fileREST files f as the agent through POST /v1/requests, the door every
// surface but the bridges is reached through. A refusal is returned as its
// code; then the same options are offered through MCP's request_approval,
// which must refuse them alike.
func (g *gatehouse) fileREST(t *testing.T, f filing) (map[string]any, string) {
	t.Helper()
	opts := make([]map[string]string, len(f.options))
	for i, o := range f.options {
		opts[i] = map[string]string{"id": o.id, "label": o.label, "effect": o.effect}
	}
	body := map[string]any{"kind": "permission", "title": f.title, "tool": "Bash", "command": "make deploy", "options": opts}
	if f.unsealed {
		body["sealed"] = false
	}
	if f.policy != nil {
		body["approvers"] = map[string]any{"required": f.policy.required, "groups": f.policy.groups}
	}
	status, data := g.Do(http.MethodPost, "/v1/requests", g.agent, body)
	if status == http.StatusCreated {
		return webtest.JSON(t, data), ""
	}
	code, _ := webtest.JSON(t, data)["error"].(string)
	if status != http.StatusBadRequest {
		t.Fatalf("filing: %d %s", status, data)
	}
	args := map[string]any{"title": f.title, "options": opts}
	call := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "request_approval", "arguments": args}}
	mstatus, mdata := g.DoHeader(http.MethodPost, "/mcp", g.agent, call, "Accept", "application/json, text/event-stream")
	refused := mstatus == http.StatusBadRequest || strings.Contains(string(mdata), `"isError":true`)
	if !refused || !strings.Contains(string(mdata), code) {
		t.Errorf("REST refused the filing with %s; MCP's request_approval answered %d %s", code, mstatus, mdata)
	}
	return nil, code
}

// effectOf is the effect of the record's decision ("" when undecided).
func effectOf(r map[string]any) string {
	d, _ := r["decision"].(string)
	opts, _ := r["options"].([]any)
	for _, o := range opts {
		m := o.(map[string]any)
		if d != "" && m["id"] == d {
			e, _ := m["effect"].(string)
			return e
		}
	}
	return ""
}

// optionWith is the id of the record's first option with the effect.
func optionWith(t testing.TB, r map[string]any, effect string) string {
	t.Helper()
	for _, o := range r["options"].([]any) {
		m := o.(map[string]any)
		if m["effect"] == effect {
			return m["id"].(string)
		}
	}
	t.Fatalf("no option with effect %s in %v", effect, r["options"])
	return ""
}

// shows says whether a button's or a hint's text shows the effect in the
// words every surface uses ("— lets this command run", "— blocks this
// command").
func shows(text, effect string) bool {
	text = strings.ToLower(text)
	switch effect {
	case "allow":
		return strings.Contains(text, "lets ")
	case "deny":
		return strings.Contains(text, "blocks ")
	}
	return false
}

// codeOfWords reads the code of a refusal a surface tells a person in
// words (the page's notices, chat replies). "" when it reads none.
func codeOfWords(text string) string {
	for _, w := range []struct{ words, code string }{
		{"who approve this request", models.ECodeNotApprover},
		{"only operators vote", models.ECodeNotApprover},
		{"not linked", models.ECodeForbidden},
		{"changed since", models.ECodeVersionConflict},
		{"changed after", models.ECodeVersionConflict},
		{"decided elsewhere", models.ECodeAlreadyDecided},
		{"csrf", models.ECodeForbidden},
		{"only operators", models.ECodeForbidden},
		{"misleading", "misleading_option"},
	} {
		if strings.Contains(strings.ToLower(text), w.words) {
			return w.code
		}
	}
	return ""
}
