package gate_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
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

// TestAttackCorpus runs testdata/attacks.txt: each request is sent byte for
// byte on a raw connection, so the gate sees exactly what an attacker wrote.
func TestAttackCorpus(t *testing.T) {
	data, err := os.ReadFile("testdata/attacks.txt")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	cases, reads := 0, 0
	for n, line := range strings.Split(string(data), "\n") {
		kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch kind {
		case "", "#":
			continue
		case "refuse":
			f := strings.Fields(rest)
			if len(f) != 4 {
				t.Fatalf("attacks.txt:%d: want refuse METHOD TARGET STATUS ERROR", n+1)
			}
			cases++
			t.Run(f[0]+" "+f[1], func(t *testing.T) { refused(t, e, f[0], f[1], f[2], f[3]) })
		case "strip":
			name, value, ok := strings.Cut(rest, ":")
			if !ok {
				t.Fatalf("attacks.txt:%d: want strip NAME: VALUE", n+1)
			}
			cases, reads = cases+1, reads+1
			t.Run("header "+name, func(t *testing.T) { stripped(t, e, name, strings.TrimSpace(value)) })
		default:
			t.Fatalf("attacks.txt:%d: unknown kind %q", n+1, kind)
		}
	}
	if cases < 40 {
		t.Fatalf("read only %d cases from attacks.txt", cases)
	}
	if h := e.up.Hits(); len(h) != reads {
		t.Fatalf("the upstream saw %d requests, want only the %d allowed reads: %+v", len(h), reads, h)
	}
	var grants int64
	if err := e.gh.store.DB.Model(&models.Grant{}).Count(&grants).Error; err != nil || grants != 0 {
		t.Fatalf("the corpus filed %d grants (%v)", grants, err)
	}
	for _, what := range []string{"denied", "pending", "released", "refused"} {
		if l := e.outcomes(t, what); len(l) > 0 {
			t.Fatalf("a refused request was judged: %v", l)
		}
	}
}

// refused sends one raw request and checks the gate answered it itself.
func refused(t *testing.T, e *env, method, target, status, code string) {
	t.Helper()
	before := len(e.up.Hits())
	body := `{"body":"attack"}`
	raw := method + " " + target + " HTTP/1.1\r\nHost: gate.test\r\nAuthorization: Bearer " + e.gh.agent +
		"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
	resp := rawRoundTrip(t, e.gate.Listener.Addr().String(), raw)
	var m map[string]any
	if err := json.Unmarshal(resp.body, &m); err != nil || strconv.Itoa(resp.status) != status || m["error"] != code || m["detail"] == "" {
		t.Fatalf("%s %s: %d %s; want %s %s", method, target, resp.status, resp.body, status, code)
	}
	if len(e.up.Hits()) != before {
		t.Fatalf("%s %s reached the upstream", method, target)
	}
}

// stripped sends an allowed read carrying the header and checks the upstream
// got the read without it.
func stripped(t *testing.T, e *env, name, value string) {
	t.Helper()
	raw := "GET /repos/acme/widgets/pulls/7 HTTP/1.1\r\nHost: gate.test\r\n" + name + ": " + value + "\r\nConnection: close\r\n\r\n"
	if resp := rawRoundTrip(t, e.gate.Listener.Addr().String(), raw); resp.status != 200 {
		t.Fatalf("the read with %s: %d %s", name, resp.status, resp.body)
	}
	h := e.up.Hits()
	last := h[len(h)-1]
	for k := range last.Header {
		if strings.EqualFold(strings.ReplaceAll(k, "_", "-"), strings.ReplaceAll(name, "_", "-")) {
			t.Fatalf("%s reached the upstream: %v", name, last.Header)
		}
	}
}

type rawAnswer struct {
	status int
	body   []byte
}

// rawRoundTrip writes raw on a new connection and reads one response.
func rawRoundTrip(t *testing.T, addr, raw string) rawAnswer {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, guard)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(guard)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", strings.SplitN(raw, "\r\n", 2)[0], err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawAnswer{status: resp.StatusCode, body: b}
}
