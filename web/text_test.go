package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// TestTextCannotLie: the agent tries to file, edit and get decided text that
// shows the operator something it does not say — a label "\u202eyneD" that
// renders as "Deny" on an allow option, an ESC sequence, a NUL, a title over
// two lines. Each is 400 invalid_input naming the field, and nothing is written.
func TestTextCannotLie(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ag := e.Token(models.RoleAgent, "a")
		op := e.Token(models.RoleOperator, "op")
		id := e.File(ag, map[string]any{"kind": "question", "allow_answer": true, "sealed": false})["id"].(string)
		filing := func(mod func(m map[string]any)) map[string]any {
			m := map[string]any{"title": "Run the tests", "options": webtest.AllowDeny}
			mod(m)
			return m
		}
		label := func(l string) []map[string]string {
			return []map[string]string{{"id": "once", "label": l, "effect": "allow"}, {"id": "deny", "label": "Deny", "effect": "deny"}}
		}
		cases := []struct {
			name, method, path, token string
			body                      any
			field                     string
		}{
			{"a bidi-reversed label", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["options"] = label("\u202eyneD") }), "options[0].label"},
			{"an isolate in a label", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["options"] = label("Allow \u2067once") }), "options[0].label"},
			{"NUL in a title", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["title"] = "Run\x00 tests" }), "title"},
			{"ESC in a title", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["title"] = "\x1b[2KStatus update: green" }), "title"},
			{"a newline in a title", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["title"] = "git status\nrm -rf ~" }), "title"},
			{"C1 in a summary", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["summary"] = "ok\u009b2K" }), "summary"},
			{"ESC in a detail", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["detail"] = "line\n\x1b]8;;http://x\x07" }), "detail"},
			{"a carriage return in a command", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["tool"], m["command"] = "Bash", "rm -rf ~\rgit status" }), "command"},
			{"a bidi override in a command", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["tool"], m["command"] = "Bash", "git status #\u202e ~ fr- mr" }), "command"},
			{"a newline in a tool", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["tool"] = "Bash\nRead" }), "tool"},
			{"a tool over its limit", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["tool"] = strings.Repeat("B", models.MaxTool+1) }), "tool"},
			{"a command over its limit", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["command"] = strings.Repeat("a", models.MaxCommand+1) }), "command"},
			{"ESC in a source_ref value", "POST", "/v1/requests", ag, filing(func(m map[string]any) { m["source_ref"] = map[string]string{"session": "s\x1b"} }), "source_ref"},
			{"PATCH a bidi label", "PATCH", "/v1/requests/" + id, ag, map[string]any{"options": label("\u202eyneD")}, "options[0].label"},
			{"PATCH ESC into a title", "PATCH", "/v1/requests/" + id, ag, map[string]any{"title": "ok\x1b[8m"}, "title"},
			{"decide with ESC in the note", "POST", "/v1/requests/" + id + "/decide", op, map[string]any{"version": 1, "answer": "yes", "note": "fine\x1b[2J"}, "note"},
			{"decide with a bidi answer", "POST", "/v1/requests/" + id + "/decide", op, map[string]any{"version": 1, "answer": "\u202eon"}, "answer"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r0, a0 := counts(t, e.Store)
				status, body := e.Do(c.method, c.path, c.token, c.body)
				if status != http.StatusBadRequest {
					t.Fatalf("%d, want 400: %s", status, body)
				}
				m := webtest.JSON(t, body)
				if m["error"] != models.ECodeInvalid || !strings.Contains(m["detail"].(string), c.field) {
					t.Fatalf("body %s, want invalid_input naming %s", body, c.field)
				}
				if r1, a1 := counts(t, e.Store); r1 != r0 || a1 != a0 {
					t.Fatalf("refused input wrote: requests %d->%d, audit %d->%d", r0, r1, a0, a1)
				}
			})
		}
		t.Run("the edited and decided request is untouched", func(t *testing.T) {
			r, err := e.Store.GetRequest(context.Background(), id)
			if err != nil || r.Version != 1 || r.Status != models.StatusOpen {
				t.Fatalf("%+v %v", r, err)
			}
		})
		t.Run("newlines and tabs are fine where text runs over lines", func(t *testing.T) {
			r := e.File(ag, map[string]any{"summary": "one\ntwo", "detail": "a\n\tb", "tool": "Bash", "command": "git status\ngit diff"})
			if r["detail"] != "a\n\tb" || r["command"] != "git status\ngit diff" {
				b, _ := json.Marshal(r)
				t.Fatalf("%s", b)
			}
			status, body := e.Do("POST", "/v1/requests/"+r["id"].(string)+"/decide", op,
				map[string]any{"version": 1, "decision": "deny", "note": "no:\n\tnot today"})
			if status != http.StatusOK {
				t.Fatalf("%d %s", status, body)
			}
		})
	})
}

// TestPendingTextCannotLie: a pending grant's fields are patterns of visible
// ASCII, so a middleware (or an agent holding its token) cannot slip a bidi
// override or an ESC into the card Gatehouse writes from them.
func TestPendingTextCannotLie(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newPendingEnv(t, dialect)
		grant := func(field, value string) map[string]any {
			m := map[string]any{"sandbox": "sb", "method": "GET", "host": "api.github.com", "port": 443,
				"path": "/x", "body_sha256": strings.Repeat("0", 64), "policy": "p", "middleware": "m"}
			m[field] = value
			return m
		}
		for _, c := range []struct{ field, value string }{
			{"path", "/repos/\u202ex"}, {"query", "a=\x1b"}, {"policy", "p\x1b"}, {"middleware", "m\u2066"},
			{"sandbox", "s\x00"}, {"host", "api.github.com\u202e"}, {"method", "GET\n"}, {"pending_id", "a\u202eb"},
		} {
			t.Run(c.field, func(t *testing.T) {
				r0, a0 := counts(t, e.store)
				var out map[string]any
				if code := e.call(t, "POST", "/v1/pending", e.runtime, grant(c.field, c.value), &out); code != http.StatusBadRequest ||
					out["error"] != models.ECodeInvalid || !strings.Contains(out["detail"].(string), c.field) {
					t.Fatalf("%d %v", code, out)
				}
				if r1, a1 := counts(t, e.store); r1 != r0 || a1 != a0 {
					t.Fatalf("refused input wrote: requests %d->%d, audit %d->%d", r0, r1, a0, a1)
				}
			})
		}
	})
}
