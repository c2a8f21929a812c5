package web_test

import (
	"context"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

func TestAuthorizationMatrix(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		owner := e.Token(models.RoleAgent, "owner")
		other := e.Token(models.RoleAgent, "other")
		runtime := e.Token(models.RoleRuntime, "rt")
		op := e.Token(models.RoleOperator, "op")
		r := e.File(owner, nil)
		id := r["id"].(string)

		cases := []struct {
			name, method, path, token string
			body                      any
			want                      int
		}{
			{"no token lists", "GET", "/v1/requests", "", nil, 401},
			{"a bad token gets", "GET", "/v1/requests/" + id, "gh_nope", nil, 401},
			{"owner gets", "GET", "/v1/requests/" + id, owner, nil, 200},
			{"other agent gets", "GET", "/v1/requests/" + id, other, nil, 404},
			{"runtime gets another's", "GET", "/v1/requests/" + id, runtime, nil, 404},
			{"operator gets", "GET", "/v1/requests/" + id, op, nil, 200},
			{"other agent waits", "GET", "/v1/requests/" + id + "/wait?timeout=1", other, nil, 404},
			{"other agent cancels", "POST", "/v1/requests/" + id + "/cancel", other, struct{}{}, 404},
			{"other agent patches", "PATCH", "/v1/requests/" + id, other, map[string]any{"summary": "x"}, 404},
			{"owner decides", "POST", "/v1/requests/" + id + "/decide", owner, map[string]any{"version": 1, "decision": "once"}, 403},
			{"runtime decides", "POST", "/v1/requests/" + id + "/decide", runtime, map[string]any{"version": 1, "decision": "once"}, 403},
			{"agent decides via attention", "POST", "/api/operator-attention/permissions/decide", owner, map[string]any{"requestId": id, "version": 1, "decision": "once"}, 403},
			{"agent dismisses", "POST", "/v1/requests/" + id + "/dismiss", owner, struct{}{}, 403},
			{"agent reads audit", "GET", "/v1/requests/" + id + "/audit", owner, nil, 403},
			{"agent reads metrics", "GET", "/metrics", owner, nil, 403},
			{"operator files", "POST", "/v1/requests", op, map[string]any{"title": "x", "options": webtest.AllowDeny}, 403},
			{"operator reads audit", "GET", "/v1/requests/" + id + "/audit", op, nil, 200},
			{"operator reads metrics", "GET", "/metrics", op, nil, 200},
			{"anyone reads healthz", "GET", "/healthz", "", nil, 200},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				status, body := e.Do(c.method, c.path, c.token, c.body)
				if status != c.want {
					t.Fatalf("%s %s: %d, want %d: %s", c.method, c.path, status, c.want, body)
				}
				if status >= 400 {
					m := webtest.JSON(t, body)
					if m["error"] == "" || m["detail"] == "" {
						t.Fatalf("error body lacks error/detail: %s", body)
					}
				}
			})
		}

		t.Run("lists show others nothing", func(t *testing.T) {
			_, body := e.Do("GET", "/v1/requests", other, nil)
			if n := len(webtest.JSON(t, body)["requests"].([]any)); n != 0 {
				t.Fatalf("other agent sees %d requests", n)
			}
			_, body = e.Do("GET", "/v1/requests", op, nil)
			if n := len(webtest.JSON(t, body)["requests"].([]any)); n != 1 {
				t.Fatalf("operator sees %d requests", n)
			}
		})

		t.Run("operator decides", func(t *testing.T) {
			status, body := e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 1, "decision": "once", "note": "fine"})
			m := webtest.JSON(t, body)
			if status != 200 || m["decision"] != "once" || m["note"] != "fine" || m["decided_by"] != "operator:op" || m["version"].(float64) != 2 {
				t.Fatalf("%d %s", status, body)
			}
		})
	})
}

// counts returns how many requests and audit rows the store holds.
func counts(t *testing.T, s *store.Store) (int64, int64) {
	t.Helper()
	var r, a int64
	s.DB.Model(&models.Request{}).Count(&r)
	s.DB.Model(&store.Audit{}).Count(&a)
	return r, a
}

func TestBadInputChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ag := e.Token(models.RoleAgent, "a")
		op := e.Token(models.RoleOperator, "op")
		id := e.File(ag, map[string]any{"sealed": false})["id"].(string)
		opts := webtest.AllowDeny
		cases := []struct {
			name, method, path, token string
			body                      any
			want                      int
			code                      string
		}{
			{"malformed JSON", "POST", "/v1/requests", ag, `{"title": "x",`, 400, "invalid_json"},
			{"empty body", "POST", "/v1/requests", ag, ``, 400, "invalid_json"},
			{"unknown field", "POST", "/v1/requests", ag, map[string]any{"title": "x", "options": opts, "expire_in": 5}, 400, "invalid_json"},
			{"missing title", "POST", "/v1/requests", ag, map[string]any{"options": opts}, 400, "invalid_input"},
			{"no options", "POST", "/v1/requests", ag, map[string]any{"title": "x"}, 400, "invalid_input"},
			{"bad option id", "POST", "/v1/requests", ag, map[string]any{"title": "x", "options": []map[string]string{{"id": "Allow Once", "label": "x"}}}, 400, "invalid_input"},
			{"bad effect", "POST", "/v1/requests", ag, map[string]any{"title": "x", "options": []map[string]string{{"id": "a", "label": "x", "effect": "maybe"}}}, 400, "invalid_input"},
			{"default not offered", "POST", "/v1/requests", ag, map[string]any{"title": "x", "options": opts, "default_option": "always"}, 400, "invalid_input"},
			{"bad kind", "POST", "/v1/requests", ag, map[string]any{"title": "x", "options": opts, "kind": "poke"}, 400, "invalid_input"},
			{"expires_in zero", "POST", "/v1/requests", ag, map[string]any{"title": "x", "options": opts, "expires_in": 0}, 400, "invalid_input"},
			{"expires_in as string", "POST", "/v1/requests", ag, map[string]any{"title": "x", "options": opts, "expires_in": "60"}, 400, "invalid_json"},
			{"body over 64 KiB", "POST", "/v1/requests", ag, `{"title":"x","detail":"` + strings.Repeat("a", 70*1024) + `"}`, 413, "body_too_large"},
			{"timeout zero", "GET", "/v1/requests/" + id + "/wait?timeout=0", ag, nil, 400, "invalid_input"},
			{"timeout 301", "GET", "/v1/requests/" + id + "/wait?timeout=301", ag, nil, 400, "invalid_input"},
			{"timeout words", "GET", "/v1/requests/" + id + "/wait?timeout=soon", ag, nil, 400, "invalid_input"},
			{"unknown status filter", "GET", "/v1/requests?status=maybe", op, nil, 400, "invalid_input"},
			{"decision not offered", "POST", "/v1/requests/" + id + "/decide", op, map[string]any{"version": 1, "decision": "always"}, 422, "decision_not_offered"},
			{"decide without version", "POST", "/v1/requests/" + id + "/decide", op, map[string]any{"decision": "once"}, 400, "invalid_input"},
			{"decide with stale version", "POST", "/v1/requests/" + id + "/decide", op, map[string]any{"version": 7, "decision": "once"}, 409, "version_conflict"},
			{"patch to no title", "PATCH", "/v1/requests/" + id, ag, map[string]any{"title": ""}, 400, "invalid_input"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r0, a0 := counts(t, e.Store)
				status, body := e.Do(c.method, c.path, c.token, c.body)
				if status != c.want {
					t.Fatalf("%d, want %d: %s", status, c.want, body)
				}
				if m := webtest.JSON(t, body); m["error"] != c.code || m["detail"] == "" {
					t.Fatalf("body %s, want code %s", body, c.code)
				}
				if r1, a1 := counts(t, e.Store); r1 != r0 || a1 != a0 {
					t.Fatalf("bad input wrote: requests %d->%d, audit %d->%d", r0, r1, a0, a1)
				}
			})
		}
		t.Run("the request is untouched", func(t *testing.T) {
			r, _ := e.Store.GetRequest(context.Background(), id)
			if r.Version != 1 || r.Status != "open" {
				t.Fatalf("%s v%d", r.Status, r.Version)
			}
		})
	})
}

func TestDecideRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ag := e.Token(models.RoleAgent, "a")
		op1, op2 := e.Token(models.RoleOperator, "op1"), e.Token(models.RoleOperator, "op2")
		id := e.File(ag, nil)["id"].(string)
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		bodies := make([][]byte, 2)
		for i, tok := range []string{op1, op2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				decision := []string{"once", "deny"}[i]
				statuses[i], bodies[i] = e.Do("POST", "/v1/requests/"+id+"/decide", tok, map[string]any{"version": 1, "decision": decision})
			}()
		}
		testkit.Wait(t, &wg, "the concurrent calls to finish")
		winners := 0
		for i, s := range statuses {
			switch s {
			case 200:
				winners++
			case 409:
				m := webtest.JSON(t, bodies[i])
				if m["error"] != "already_decided" && m["error"] != "version_conflict" {
					t.Fatalf("loser: %s", bodies[i])
				}
				if cur, ok := m["request"].(map[string]any); !ok || cur["status"] != "resolved" {
					t.Fatalf("409 without the current record: %s", bodies[i])
				}
			default:
				t.Fatalf("status %d: %s", s, bodies[i])
			}
		}
		if winners != 1 {
			t.Fatalf("%d winners", winners)
		}
	})
}

func TestIdempotentRetry(t *testing.T) {
	e := webtest.New(t, "sqlite", web.Config{})
	ag := e.Token(models.RoleAgent, "a")
	send := func() (int, map[string]any) {
		req, _ := http.NewRequest("POST", e.URL+"/v1/requests", strings.NewReader(`{"title":"deploy","options":[{"id":"ok","label":"OK"}]}`))
		req.Header.Set("Authorization", "Bearer "+ag)
		req.Header.Set("Idempotency-Key", "deploy-42")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = jsonDecode(resp, &m)
		return resp.StatusCode, m
	}
	s1, first := send()
	s2, second := send()
	if s1 != 201 || s2 != 200 || first["id"] != second["id"] {
		t.Fatalf("first %d %v, retry %d %v", s1, first["id"], s2, second["id"])
	}
	if r, _ := counts(t, e.Store); r != 1 {
		t.Fatalf("%d requests stored", r)
	}
}

func TestAttentionDecide(t *testing.T) {
	e := webtest.New(t, "sqlite", web.Config{})
	ag, op := e.Token(models.RoleAgent, "a"), e.Token(models.RoleOperator, "op")
	id := e.File(ag, nil)["id"].(string)
	status, body := e.Do("POST", "/api/operator-attention/permissions/decide", op, map[string]any{"requestId": id, "version": 1, "decision": "deny"})
	if m := webtest.JSON(t, body); status != 200 || m["decision"] != "deny" {
		t.Fatalf("%d %s", status, body)
	}
	status, body = e.Do("POST", "/api/operator-attention/permissions/decide", op, map[string]any{"requestId": "req_nope", "version": 1, "decision": "deny"})
	if status != 404 {
		t.Fatalf("%d %s", status, body)
	}
}

func TestPatchCancelDismiss(t *testing.T) {
	e := webtest.New(t, "sqlite", web.Config{})
	ag, op := e.Token(models.RoleAgent, "a"), e.Token(models.RoleOperator, "op")
	id := e.File(ag, map[string]any{"sealed": false})["id"].(string)
	status, body := e.Do("PATCH", "/v1/requests/"+id, ag, map[string]any{"summary": "now with context"})
	if m := webtest.JSON(t, body); status != 200 || m["version"].(float64) != 2 || m["summary"] != "now with context" {
		t.Fatalf("patch: %d %s", status, body)
	}
	status, body = e.Do("POST", "/v1/requests/"+id+"/cancel", ag, struct{}{})
	if m := webtest.JSON(t, body); status != 200 || m["status"] != "cancelled" {
		t.Fatalf("cancel: %d %s", status, body)
	}
	status, _ = e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": 2, "decision": "once"})
	if status != 409 {
		t.Fatalf("decide after cancel: %d", status)
	}
	blocking := e.File(ag, nil)["id"].(string)
	status, body = e.Do("POST", "/v1/requests/"+blocking+"/dismiss", op, struct{}{})
	if m := webtest.JSON(t, body); status != 409 || m["error"] != "not_dismissable" {
		t.Fatalf("dismiss an approval: %d %s, want 409 not_dismissable", status, body)
	}
	status, body = e.Do("GET", "/v1/requests/"+blocking, op, nil)
	if m := webtest.JSON(t, body); status != 200 || m["status"] != "open" || m["version"].(float64) != 1 {
		t.Fatalf("after a refused dismiss: %d %s", status, body)
	}
	fyi := e.File(ag, map[string]any{"kind": "waiting", "title": "building", "options": []any{}})
	status, body = e.Do("POST", "/v1/requests/"+fyi["id"].(string)+"/dismiss", op, struct{}{})
	if m := webtest.JSON(t, body); status != 200 || m["status"] != "dismissed" {
		t.Fatalf("dismiss: %d %s", status, body)
	}
	_, body = e.Do("GET", "/v1/requests/"+id+"/audit", op, nil)
	var actions []string
	for _, ev := range webtest.JSON(t, body)["entries"].([]any) {
		actions = append(actions, ev.(map[string]any)["action"].(string))
	}
	if got := fmt.Sprint(actions); got != "[create edit cancel]" {
		t.Fatalf("audit %s", got)
	}
}
