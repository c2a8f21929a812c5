package gate_test

import (
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"sync"
	"testing"
)

// TestAgentCannotApproveItself is the agent on the same machine, holding its
// own Gatehouse token, trying to get a merge through without a person.
func TestAgentCannotApproveItself(t *testing.T) {
	e := newEnv(t)
	id, req := e.ask(t, "PUT", mergePath, mergeBody)

	t.Run("decide its own grant with its token", func(t *testing.T) {
		a := e.gh.call(t, "POST", "/v1/requests/"+req+"/decide", e.gh.agent, `{"version":1,"decision":"approve"}`)
		if a.Status < 400 {
			t.Fatalf("the agent decided: %d %s", a.Status, a.Body)
		}
	})
	t.Run("claim the grant itself", func(t *testing.T) {
		body := `{"sandbox":"sb-1","method":"PUT","host":"127.0.0.1","port":` + e.upstreamPort(t) +
			`,"path":"` + mergePath + `","query":"","body_sha256":"` + sha(mergeBody) + `"}`
		a := e.gh.call(t, "POST", "/v1/pending/claim", e.gh.agent, body)
		if a.Status != http.StatusForbidden && a.Status != http.StatusNotFound {
			t.Fatalf("the agent's claim: %d %s", a.Status, a.Body)
		}
	})
	t.Run("read the grant's wait with its token", func(t *testing.T) {
		if a := e.gh.call(t, "GET", "/v1/pending/"+id, e.gh.agent, ""); a.Status < 400 {
			t.Fatalf("the agent read the grant: %d %s", a.Status, a.Body)
		}
	})
	t.Run("method override header on an allowed request", func(t *testing.T) {
		// A read is allowed; an override would turn it into the merge upstream.
		a := e.send(t, "GET", mergePath, "", "X-HTTP-Method-Override", "PUT", "X-Original-URL", mergePath)
		if a.Status != 200 {
			t.Fatalf("read: %d %s", a.Status, a.Body)
		}
		h := e.up.Hits()
		last := h[len(h)-1]
		if last.Header.Get("X-Http-Method-Override") != "" || last.Header.Get("X-Original-Url") != "" {
			t.Fatalf("an override header reached the upstream: %v", last.Header)
		}
	})
	t.Run("dot segments past an allow rule", func(t *testing.T) {
		before := len(e.up.Hits())
		for _, p := range []string{
			"/repos/acme/widgets/pulls/7/merge/../../../issues/1/comments",
			"/repos/acme/widgets/pulls/7/merge/%2e%2e/x/issues/1/comments",
			"/repos/acme/widgets/./pulls/7/merge",
		} {
			if a := e.send(t, "POST", p, mergeBody); a.Status != http.StatusBadRequest {
				t.Errorf("POST %s: %d %s", p, a.Status, a.Body)
			}
		}
		if len(e.up.Hits()) != before {
			t.Fatal("a dotted path reached the upstream")
		}
	})
	if st := e.grant(t, id); st.Status != "pending" {
		t.Fatalf("the agent moved its grant without a person: %+v", st)
	}

	e.gh.decide(t, req, "approve")
	t.Run("change the body after approval", func(t *testing.T) {
		a := e.send(t, "PUT", mergePath, `{"merge_method":"squash","sha":"other"}`)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" || m["pending_id"] == id {
			t.Fatalf("changed body: %d %s", a.Status, a.Body)
		}
	})
	t.Run("smuggle credentials in headers", func(t *testing.T) {
		before := len(e.up.Hits())
		a := e.send(t, "PUT", mergePath, mergeBody,
			"Authorization", "token ghp_agent-own", // a second Authorization value
			"Connection", "Authorization", // ask the proxy to drop the gate's credential
			"Proxy-Authorization", "Basic YWdlbnQ6eA==")
		if a.Status != 200 {
			t.Fatalf("the approved request: %d %s", a.Status, a.Body)
		}
		h := e.up.Hits()
		if len(h) != before+1 {
			t.Fatalf("upstream hits %d, want %d", len(h), before+1)
		}
		got := h[len(h)-1].Header
		if v := got.Values("Authorization"); len(v) != 1 || v[0] != "Bearer "+upstreamSecret {
			t.Fatalf("Authorization upstream: %q", v)
		}
		if got.Get("Proxy-Authorization") != "" {
			t.Fatalf("Proxy-Authorization reached the upstream")
		}
	})
	t.Run("replay the claimed grant", func(t *testing.T) {
		var wg sync.WaitGroup
		answers := make([]answer, 8)
		for i := range answers {
			wg.Go(func() { answers[i] = e.send(t, "PUT", mergePath, mergeBody) })
		}
		testkit.Wait(t, &wg, "the concurrent calls to finish")
		for _, a := range answers {
			if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" || m["pending_id"] == id {
				t.Fatalf("replay: %d %s", a.Status, a.Body)
			}
		}
	})
	merges := 0
	for _, h := range e.up.Hits() {
		if h.Method == "PUT" {
			merges++
		}
	}
	if merges != 1 {
		t.Fatalf("the upstream merged %d times, want once", merges)
	}
}
