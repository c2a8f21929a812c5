package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// The fuzz tests send outside input through the real server (SQLite, one per
// fuzz worker) and check that every answer is a success or a clean refusal:
// a 4xx with {"error": snake_code, "detail": words}, never a 5xx, a panic or
// a half-applied change.

var snakeCode = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// refused fails unless the answer is a 4xx with a snake_code error and a detail.
func refused(t *testing.T, status int, body []byte) {
	t.Helper()
	if status < 400 || status > 499 {
		t.Fatalf("status %d: %s", status, body)
	}
	var e struct{ Error, Detail string }
	if err := json.Unmarshal(body, &e); err != nil || !snakeCode.MatchString(e.Error) || e.Detail == "" {
		t.Fatalf("refusal %d is not {error, detail}: %s", status, body)
	}
}

// do is webtest's Env.Do for a fuzz target, which must fail its own t.
func do(t *testing.T, env *webtest.Env, method, path, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, env.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := env.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// fileOne files an ordinary request and returns its id.
func fileOne(t *testing.T, env *webtest.Env, token string) string {
	t.Helper()
	status, data := do(t, env, http.MethodPost, "/v1/requests", token, []byte(`{"title":"Run git push origin main","options":[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]}`))
	var r api.Request
	if status != http.StatusCreated || json.Unmarshal(data, &r) != nil {
		t.Fatalf("file: %d %s", status, data)
	}
	return r.ID
}

func countOpen(t *testing.T, env *webtest.Env) int64 {
	t.Helper()
	n, err := env.Store.CountOpen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// FuzzFileRequest: a filing body is filed (and reads back as filed) or refused
// with nothing stored.
func FuzzFileRequest(f *testing.F) {
	for _, s := range []string{
		`{"title":"Run git push origin main","options":[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]}`,
		`{"kind":"question","title":"Which branch?","expires_in":60}`,
		`{"title":"x","expires_in":18446744074}`,
		`{"title":"x","title":"y"}`,
		`{"title":"\u202egit push","tool":"Bash","command":"git push\u0007"}`,
		`{"title":"x","source_ref":{"a":"b"},"runtime_id":"rt_nope"}`,
		`{"title":"x"} {}`, `[]`, `null`, ``,
		`{"title":"Run: git status","options":[{"id":"once","label":"Allow once","effect":"allow"}],"command":"rm -rf /","COMMAND":"git status"}`,
		`{"\u212aind":"permission","title":"x","options":[{"id":"once","label":"Allow once","effect":"allow"}]}`,
		`{"Title":"x","options":[{"id":"once","label":"Allow once","effect":"allow"}]}`,
		"{\"title\":\"ok\xff\xfe\",\"options\":[{\"id\":\"once\",\"label\":\"Allow once\",\"effect\":\"allow\"}]}",
	} {
		f.Add([]byte(s))
	}
	env := webtest.New(f, "sqlite", web.Config{})
	agent := env.Token(models.RoleAgent, "fuzz-agent")
	f.Fuzz(func(t *testing.T, body []byte) {
		before := countOpen(t, env)
		status, data := do(t, env, http.MethodPost, "/v1/requests", agent, body)
		if status != http.StatusCreated {
			refused(t, status, data)
			if after := countOpen(t, env); after != before {
				t.Fatalf("a refused filing (%d) changed the open count %d -> %d", status, before, after)
			}
			return
		}
		var r api.Request
		if err := json.Unmarshal(data, &r); err != nil || r.ID == "" {
			t.Fatalf("filed, but the answer is %s (%v)", data, err)
		}
		// What was stored is what the body says under its exact names: a
		// key that matched only under case folding would break this.
		var exact map[string]any
		if err := json.Unmarshal(body, &exact); err != nil {
			t.Fatalf("filed a body encoding/json cannot read: %s", body)
		}
		for _, k := range []string{"title", "command", "tool", "kind", "risk"} {
			if v, ok := exact[k].(string); ok && k != "risk" && v != fieldOf(r, k) {
				t.Fatalf("%s: the body says %q under that exact name, the record %q", k, v, fieldOf(r, k))
			}
		}
		for k := range exact {
			if !knownFilingField[k] {
				t.Fatalf("filed a body with the member %q, which is no field's exact name", k)
			}
		}
		code, got := do(t, env, http.MethodGet, "/v1/requests/"+r.ID, agent, nil)
		var back api.Request
		if code != 200 || json.Unmarshal(got, &back) != nil || back.Title != r.Title || back.Version != r.Version {
			t.Fatalf("filed %s, read back %d %s", data, code, got)
		}
	})
}

var knownFilingField = map[string]bool{"kind": true, "title": true, "summary": true, "detail": true, "risk": true,
	"tool": true, "command": true, "options": true, "allow_answer": true, "default_option": true, "source": true,
	"source_ref": true, "runtime_id": true, "expires_in": true, "sealed": true, "approvers": true}

func fieldOf(r api.Request, name string) string {
	switch name {
	case "title":
		return r.Title
	case "command":
		return r.Command
	case "tool":
		return r.Tool
	}
	return r.Kind
}

// FuzzDecide: a decide body decides the request or is refused, leaving it open
// at version 1.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"option":"once"}`, `{"version":1,"option":"deny","note":"no"}`, `{"version":2,"option":"once"}`,
		`{"version":1,"option":"nope"}`, `{"version":1,"answer":"main"}`, `{"version":-1}`, `{"version":1e99,"option":"once"}`,
		`{"version":1,"option":"once","note":"\u0000"}`, `{"version":1,"option":"once","option":"deny"}`, `{}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	env := webtest.New(f, "sqlite", web.Config{})
	agent, operator := env.Token(models.RoleAgent, "fuzz-agent"), env.Token(models.RoleOperator, "fuzz-op")
	f.Fuzz(func(t *testing.T, body []byte) {
		id := fileOne(t, env, agent)
		status, data := do(t, env, http.MethodPost, "/v1/requests/"+id+"/decide", operator, body)
		_, got := do(t, env, http.MethodGet, "/v1/requests/"+id, operator, nil)
		var r api.Request
		if err := json.Unmarshal(got, &r); err != nil {
			t.Fatal(err)
		}
		if status == http.StatusOK {
			if r.Status != "resolved" || r.Version != 2 {
				t.Fatalf("decided (%s), but the record is %s v%d", data, r.Status, r.Version)
			}
			return
		}
		refused(t, status, data)
		if r.Status != "open" || r.Version != 1 {
			t.Fatalf("a refused decision (%d %s) left the record %s v%d", status, data, r.Status, r.Version)
		}
	})
}

// FuzzFilePending: pending digest fields are filed with the digest
// models.Digest gives them (and it reads back), or refused.
func FuzzFilePending(f *testing.F) {
	for _, s := range []string{
		`{"sandbox":"sb-1","policy":"github-merge","method":"PUT","host":"api.github.com","port":443,"path":"/repos/o/r/pulls/7/merge"}`,
		`{"sandbox":"sb-1","method":"get","host":"API.example","port":8443,"path":"/a%2Fb","query":"x=1&y=2","body_sha256":"AB"}`,
		`{"sandbox":"sb","method":"GET","host":"h","port":70000,"path":"/"}`,
		`{"sandbox":"sb","method":"GET","host":"h","port":1,"path":"/","max_wait":-5}`,
		`{"sandbox":"sb","method":"GET","host":"h\n","port":1,"path":"/","pending_id":"../x"}`,
		`{"sandbox":"","method":"","host":"","port":0,"path":""}`,
	} {
		f.Add([]byte(s))
	}
	env := webtest.New(f, "sqlite", web.Config{})
	runtime := env.Token(models.RoleRuntime, "fuzz-rt")
	f.Fuzz(func(t *testing.T, body []byte) {
		status, data := do(t, env, http.MethodPost, "/v1/pending", runtime, body)
		if status != http.StatusCreated {
			refused(t, status, data)
			return
		}
		var in api.NewPending
		if err := json.Unmarshal(body, &in); err != nil {
			t.Fatalf("filed a body that is not a NewPending: %v", err)
		}
		var out api.PendingFiled
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		want := models.Digest(models.Target{Sandbox: in.Sandbox, Method: in.Method, Host: in.Host, Port: in.Port,
			Path: in.Path, Query: in.Query, BodySHA256: in.BodySHA256})
		if out.Digest != want {
			t.Fatalf("digest %s, want %s for %s", out.Digest, want, body)
		}
		code, got := do(t, env, http.MethodGet, "/v1/pending/"+url.PathEscape(out.PendingID), runtime, nil)
		var st api.PendingStatus
		if code != 200 || json.Unmarshal(got, &st) != nil || st.Digest != want {
			t.Fatalf("filed %s, read back %d %s", data, code, got)
		}
	})
}

// FuzzListCursor: a cursor (the list's or the feed's) is one the server gave
// or a clean 400.
func FuzzListCursor(f *testing.F) {
	for _, s := range []string{"", "MTcwMDAwMDAwMDAwMDAwMDAwMHxyZXFfMQ", "!!", "MXw", "-1", "9223372036854775808", "12", "x|y"} {
		f.Add(s)
	}
	env := webtest.New(f, "sqlite", web.Config{})
	agent, operator, runtime := env.Token(models.RoleAgent, "a"), env.Token(models.RoleOperator, "o"), env.Token(models.RoleRuntime, "r")
	for range 3 {
		env.File(agent, nil)
	}
	status, data := env.Do(http.MethodPost, "/v1/runtimes", runtime, map[string]any{"name": "fuzz", "machine": "m"})
	if status != 200 && status != 201 {
		f.Fatalf("register: %d %s", status, data)
	}
	rtID := webtest.JSON(f, data)["id"].(string)
	_, first := env.Do(http.MethodGet, "/v1/requests?limit=1", operator, nil)
	if c, _ := webtest.JSON(f, first)["next_cursor"].(string); c != "" {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		status, data := do(t, env, http.MethodGet, "/v1/requests?limit=2&cursor="+url.QueryEscape(cursor), operator, nil)
		if status != 200 {
			refused(t, status, data)
		}
		status, data = do(t, env, http.MethodGet, "/v1/runtimes/"+rtID+"/decisions?timeout=0&after="+url.QueryEscape(cursor), runtime, nil)
		if status != 200 {
			refused(t, status, data)
		}
	})
}
