package gate_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

const mergePath = "/repos/acme/widgets/pulls/7/merge"
const mergeBody = `{"merge_method":"squash"}`

func TestRulesDecide(t *testing.T) {
	e := newEnv(t)
	t.Run("allow forwards", func(t *testing.T) {
		a := e.send(t, "GET", "/repos/acme/widgets/pulls?state=open", "")
		if a.Status != 200 || string(a.Body) != `{"ok":true}` {
			t.Fatalf("allowed read: %d %s", a.Status, a.Body)
		}
		h := e.up.Hits()
		if len(h) != 1 || h[0].Method != "GET" || h[0].URI != "/repos/acme/widgets/pulls?state=open" {
			t.Fatalf("upstream saw %+v", h)
		}
		if l := e.outcomes(t, "allowed"); len(l) != 1 || l[0]["rule"] != "reads" || len(l[0]["digest"].(string)) != 64 {
			t.Fatalf("allowed log: %v", l)
		}
	})
	t.Run("deny answers 403 gate_denied and sends nothing", func(t *testing.T) {
		before := len(e.up.Hits())
		a := e.send(t, "DELETE", "/repos/acme/widgets", "")
		if m := a.JSON(t); a.Status != 403 || m["error"] != "gate_denied" || m["detail"] == "" {
			t.Fatalf("deny: %d %s", a.Status, a.Body)
		}
		if len(e.up.Hits()) != before {
			t.Fatal("a denied request reached the upstream")
		}
		if l := e.outcomes(t, "denied"); len(l) != 1 || l[0]["rule"] != "no-deletes" {
			t.Fatalf("denied log: %v", l)
		}
	})
	t.Run("ask hands on Gatehouse's approval_pending at once", func(t *testing.T) {
		before := len(e.up.Hits())
		a := e.send(t, "PUT", mergePath, mergeBody)
		m := a.JSON(t)
		if a.Status != 403 || m["error"] != "approval_pending" || m["policy"] != "merges" || m["middleware"] != "gatehouse-gate" {
			t.Fatalf("ask: %d %s", a.Status, a.Body)
		}
		steps, _ := m["next_steps"].([]any)
		wait, _ := steps[0].(map[string]any)
		if len(steps) != 2 || wait["url"] != e.gh.srv.URL+"/v1/pending/"+m["pending_id"].(string)+"/wait" {
			t.Fatalf("next steps: %v", m["next_steps"])
		}
		if !strings.Contains(m["agent_guidance"].(string), "identical request") {
			t.Fatalf("the guidance is not Gatehouse's: %v", m["agent_guidance"])
		}
		if len(e.up.Hits()) != before {
			t.Fatal("an asked request reached the upstream")
		}
		st := e.grant(t, m["pending_id"].(string))
		if st.Status != "pending" {
			t.Fatalf("grant: %+v", st)
		}
		l := e.outcomes(t, "pending")
		if len(l) != 1 || l[0]["pending_id"] != st.PendingID || l[0]["digest"] != st.Digest || l[0]["request_id"] != st.RequestID {
			t.Fatalf("pending log %v, grant %+v", l, st)
		}
	})
	t.Run("the same request again before a decision is not filed twice", func(t *testing.T) {
		a := e.send(t, "PUT", mergePath, mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" {
			t.Fatalf("again: %d %s", a.Status, a.Body)
		}
		if l := e.outcomes(t, "pending"); len(l) != 2 || l[1]["filed"] != false || l[1]["pending_id"] != l[0]["pending_id"] {
			t.Fatalf("the second ask filed a new grant: %v", l)
		}
	})
	t.Run("unmatched asks", func(t *testing.T) {
		a := e.send(t, "PATCH", "/repos/acme/widgets", `{"private":false}`)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" || m["policy"] != "unmatched" {
			t.Fatalf("unmatched: %d %s", a.Status, a.Body)
		}
	})
}

func TestApprovedRetryForwardedOnce(t *testing.T) {
	e := newEnv(t)
	id, req := e.ask(t, "PUT", mergePath, mergeBody)
	e.gh.decide(t, req, "approve")
	if st := e.grant(t, id); st.Status != "approved" || st.Released {
		t.Fatalf("after approval: %+v", st)
	}
	a := e.send(t, "PUT", mergePath, mergeBody)
	if a.Status != 200 || string(a.Body) != `{"ok":true}` {
		t.Fatalf("identical retry: %d %s", a.Status, a.Body)
	}
	h := e.up.Hits()
	if len(h) != 1 || h[0].Method != "PUT" || h[0].URI != mergePath || h[0].Body != mergeBody {
		t.Fatalf("upstream saw %+v", h)
	}
	if st := e.grant(t, id); !st.Released {
		t.Fatalf("grant not released: %+v", st)
	}
	l := e.outcomes(t, "released")
	if len(l) != 1 || l[0]["pending_id"] != id || l[0]["digest"] != e.grant(t, id).Digest {
		t.Fatalf("released log: %v", l)
	}
	t.Run("the retry after that is a new request", func(t *testing.T) {
		a := e.send(t, "PUT", mergePath, mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" || m["pending_id"] == id {
			t.Fatalf("third send: %d %s", a.Status, a.Body)
		}
		if len(e.up.Hits()) != 1 {
			t.Fatal("a used grant released a second request")
		}
	})
}

func TestAnyDifferenceMatchesNothing(t *testing.T) {
	// Each variant differs from the approved request in one field; the gate
	// must treat it as new (ask again), never release the grant for it.
	variants := []struct{ name, method, target, body string }{
		{"method", "POST", mergePath, mergeBody},
		{"path", "PUT", "/repos/acme/widgets/pulls/8/merge", mergeBody},
		{"query", "PUT", mergePath + "?force=1", mergeBody},
		{"body", "PUT", mergePath, `{"merge_method":"merge"}`},
		{"no body", "PUT", mergePath, ""},
	}
	e := newEnv(t)
	id, req := e.ask(t, "PUT", mergePath, mergeBody)
	e.gh.decide(t, req, "approve")
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			a := e.send(t, v.method, v.target, v.body)
			if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" || m["pending_id"] == id {
				t.Fatalf("%s %s: %d %s", v.method, v.target, a.Status, a.Body)
			}
		})
	}
	if n := len(e.up.Hits()); n != 0 {
		t.Fatalf("%d variants reached the upstream", n)
	}
	if st := e.grant(t, id); st.Status != "approved" || st.Released {
		t.Fatalf("a variant spent the grant: %+v", st)
	}
	t.Run("host and port", func(t *testing.T) {
		// Another gate on another upstream (another port of the same host)
		// shares the runtime token and the sandbox, but not the grant.
		other := newUpstream(t)
		e2 := e.beside(t, other, nil)
		a := e2.send(t, "PUT", mergePath, mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" || m["pending_id"] == id {
			t.Fatalf("other port: %d %s", a.Status, a.Body)
		}
		e3 := e.beside(t, e.up, func(u string) string { return strings.Replace(u, "127.0.0.1", "localhost", 1) })
		a = e3.send(t, "PUT", mergePath, mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_pending" || m["pending_id"] == id {
			t.Fatalf("other host name: %d %s", a.Status, a.Body)
		}
		if len(other.Hits())+len(e.up.Hits()) != 0 {
			t.Fatal("a request for another host or port used the grant")
		}
	})
	t.Run("the identical request still goes through once", func(t *testing.T) {
		if a := e.send(t, "PUT", mergePath, mergeBody); a.Status != 200 {
			t.Fatalf("identical: %d %s", a.Status, a.Body)
		}
		if n := len(e.up.Hits()); n != 1 {
			t.Fatalf("upstream hits: %d", n)
		}
	})
}

func TestDeniedAndExpiredGrants(t *testing.T) {
	t.Run("denied", func(t *testing.T) {
		e := newEnv(t)
		id, req := e.ask(t, "PUT", mergePath, mergeBody)
		e.gh.decide(t, req, "deny")
		a := e.send(t, "PUT", mergePath, mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_denied" || m["pending_id"] != id {
			t.Fatalf("after denial: %d %s", a.Status, a.Body)
		}
		if len(e.up.Hits()) != 0 {
			t.Fatal("a denied request reached the upstream")
		}
		if l := e.outcomes(t, "refused"); len(l) != 1 || l[0]["pending_id"] != id || l[0]["reason"] != "approval_denied" {
			t.Fatalf("refused log: %v", l)
		}
		// Spent: the next identical request asks a person again.
		if m := e.send(t, "PUT", mergePath, mergeBody).JSON(t); m["error"] != "approval_pending" || m["pending_id"] == id {
			t.Fatalf("after the refusal: %v", m)
		}
	})
	t.Run("expired", func(t *testing.T) {
		e := newEnv(t)
		id, _ := e.ask(t, "PUT", mergePath, mergeBody)
		// Move Gatehouse's clock past the grant's expiry and run its sweep,
		// as the sweeper would.
		e.gh.store.Now = func() time.Time { return time.Now().UTC().Add(2 * time.Hour) }
		if n, _, err := e.gh.store.Expire(context.Background()); err != nil || n != 1 {
			t.Fatalf("expire: %d %v", n, err)
		}
		e.gh.store.Now = time.Now
		a := e.send(t, "PUT", mergePath, mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_expired" || m["pending_id"] != id {
			t.Fatalf("after expiry: %d %s", a.Status, a.Body)
		}
		if len(e.up.Hits()) != 0 {
			t.Fatal("an expired request reached the upstream")
		}
	})
}

func TestBodyLimit(t *testing.T) {
	e := newEnv(t, func(c *gateConfig) { c.MaxBody = 1024 })
	t.Run("at the limit", func(t *testing.T) {
		if a := e.send(t, "POST", "/repos/acme/widgets/issues/1/comments", strings.Repeat("a", 1024)); a.Status != 200 {
			t.Fatalf("1024 bytes: %d %s", a.Status, a.Body)
		}
	})
	t.Run("beyond it, declared", func(t *testing.T) {
		a := e.send(t, "POST", "/repos/acme/widgets/issues/1/comments", strings.Repeat("a", 1025))
		if m := a.JSON(t); a.Status != http.StatusRequestEntityTooLarge || m["error"] != "body_too_large" || m["detail"] == "" {
			t.Fatalf("1025 bytes: %d %s", a.Status, a.Body)
		}
	})
	t.Run("beyond it, chunked", func(t *testing.T) {
		a := e.sendChunked(t, "POST", "/repos/acme/widgets/issues/1/comments", strings.Repeat("a", 4096))
		if m := a.JSON(t); a.Status != http.StatusRequestEntityTooLarge || m["error"] != "body_too_large" {
			t.Fatalf("chunked: %d %s", a.Status, a.Body)
		}
	})
	if n := len(e.up.Hits()); n != 1 {
		t.Fatalf("upstream hits: %d, want only the one within the limit", n)
	}
}

// TestRestartLosesNothing: the grant lives in Gatehouse, so a gate started
// after the approval releases the retry as the first would have.
func TestRestartLosesNothing(t *testing.T) {
	e := newEnv(t)
	id, req := e.ask(t, "PUT", mergePath, mergeBody)
	e.gh.decide(t, req, "approve")
	e.gate.Close()
	restarted := e.beside(t, e.up, nil)
	if a := restarted.send(t, "PUT", mergePath, mergeBody); a.Status != 200 {
		t.Fatalf("retry through the restarted gate: %d %s", a.Status, a.Body)
	}
	if n := len(e.up.Hits()); n != 1 {
		t.Fatalf("upstream hits %d", n)
	}
	if l := restarted.outcomes(t, "released"); len(l) != 1 || l[0]["pending_id"] != id {
		t.Fatalf("released log: %v", l)
	}
}

// TestUpstreamBasePath: an upstream URL with a path puts the agent's path
// below it; the rules and the grant see the path as sent upstream.
func TestUpstreamBasePath(t *testing.T) {
	e := newEnv(t)
	based := e.beside(t, e.up, func(u string) string { return u + "/api/v3/" })
	if a := based.send(t, "GET", "/repos/acme/widgets?per_page=5", ""); a.Status != 200 {
		t.Fatalf("read: %d %s", a.Status, a.Body)
	}
	if h := e.up.Hits(); len(h) != 1 || h[0].URI != "/api/v3/repos/acme/widgets?per_page=5" {
		t.Fatalf("upstream saw %+v", h)
	}
	// The merge rule is anchored at /repos, so below /api/v3 it is unmatched:
	// asked all the same, under the policy that says so.
	a := based.send(t, "PUT", mergePath, mergeBody)
	m := a.JSON(t)
	if a.Status != 403 || m["policy"] != "unmatched" {
		t.Fatalf("merge: %d %s", a.Status, a.Body)
	}
	if l := based.outcomes(t, "pending"); len(l) != 1 || l[0]["path"] != "/api/v3"+mergePath {
		t.Fatalf("pending log: %v", l)
	}
}
