package main

import (
	"context"
	"encoding/json"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

func askArgs(ts *testServer, extra ...string) []string {
	return append([]string{"ask", "--url", ts.URL, "--token", ts.Agent}, extra...)
}

// decidedAsk runs ask, decides its request through the API and returns the result.
func decidedAsk(t *testing.T, ts *testServer, option, note string, extra ...string) (result, string) {
	t.Helper()
	ids := ts.created(t)
	done := start(askArgs(ts, extra...), nil)
	id := testkit.Recv(t, ids, "the filed request id")
	ts.decide(t, id, option, note)
	return testkit.Recv(t, done, "the command to end"), id
}

func TestAsk(t *testing.T) {
	t.Run("allow exits 0 and prints the decision", func(t *testing.T) {
		res, _ := decidedAsk(t, newTestServer(t), "allow", "", "--title", "Deploy v1.4 to production")
		if res.code != exitAllow || res.stdout != "allow\n" {
			t.Fatalf("exit %d stdout %q stderr %s", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("deny exits 1", func(t *testing.T) {
		res, _ := decidedAsk(t, newTestServer(t), "deny", "", "--title", "Deploy v1.4 to production")
		if res.code != exitDeny || res.stdout != "deny\n" {
			t.Fatalf("exit %d stdout %q", res.code, res.stdout)
		}
	})
	t.Run("custom options map by effect", func(t *testing.T) {
		res, _ := decidedAsk(t, newTestServer(t), "canary", "", "--title", "Deploy", "--option", "canary:Canary only:allow", "--option", "stop:Stop:deny")
		if res.code != exitAllow || res.stdout != "canary\n" {
			t.Fatalf("exit %d stdout %q", res.code, res.stdout)
		}
	})
	t.Run("an option without an effect exits 4, never 0, and prints its id", func(t *testing.T) {
		// `if gatehouse ask …; then ./deploy.sh; fi` must not deploy on "Ask me tomorrow".
		res, _ := decidedAsk(t, newTestServer(t), "later", "", "--title", "Deploy", "--option", "go:Deploy:allow",
			"--option", "later:Ask me tomorrow", "--option", "stop:Stop:deny")
		if res.code != exitOther || res.stdout != "later\n" {
			t.Fatalf("exit %d stdout %q, want %d and later", res.code, res.stdout, exitOther)
		}
	})
	t.Run("--json prints the final record", func(t *testing.T) {
		ts := newTestServer(t)
		res, id := decidedAsk(t, ts, "deny", "not on a Friday", "--title", "Deploy", "--json")
		if res.code != exitDeny {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
		var r api.Request
		if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
			t.Fatalf("stdout is not a record: %v\n%s", err, res.stdout)
		}
		if r.ID != id || r.Status != "resolved" || r.Decision == nil || *r.Decision != "deny" || r.Note == nil || *r.Note != "not on a Friday" || r.DecidedBy == nil || *r.DecidedBy != "operator:alice" {
			t.Fatalf("record %+v", r)
		}
	})
	t.Run("--detail-file and --kind are filed", func(t *testing.T) {
		ts := newTestServer(t)
		detail := filepath.Join(t.TempDir(), "plan.txt")
		if err := os.WriteFile(detail, []byte("migrate 3 tables\ndrop 1 index\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, id := decidedAsk(t, ts, "allow", "", "--title", "Run the migration", "--detail-file", detail, "--kind", "permission")
		r, err := ts.Operator.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != "permission" || r.Detail != "migrate 3 tables\ndrop 1 index\n" || r.Source != "host" {
			t.Fatalf("filed %+v", r)
		}
	})
	t.Run("timeout exits 2 and cancels the request", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		res := testkit.Recv(t, start(askArgs(ts, "--title", "Nobody answers", "--timeout", "1s"), nil), "the command to end")
		if res.code != exitExpired {
			t.Fatalf("exit %d, want %d: %s", res.code, exitExpired, res.stderr)
		}
		r, err := ts.Operator.Get(context.Background(), testkit.Recv(t, ids, "the filed request id"))
		if err != nil {
			t.Fatal(err)
		}
		// The request expires when the wait times out, so the expiry sweeper
		// (running, as in production) may settle it just before ask cancels it:
		// either way it is no longer open.
		if r.Status != "cancelled" && r.Status != "expired" {
			t.Fatalf("status %q, want cancelled (or expired by the sweeper)", r.Status)
		}
	})
	t.Run("a dismissed request exits 2", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		// Only a silent kind may be dismissed; an approval is decided.
		done := start(askArgs(ts, "--title", "Never mind", "--kind", "review", "--json"), nil)
		id := testkit.Recv(t, ids, "the filed request id")
		if err := ts.Operator.Do(context.Background(), http.MethodPost, "/v1/requests/"+id+"/dismiss", nil, struct{}{}, nil); err != nil {
			t.Fatal(err)
		}
		res := testkit.Recv(t, done, "the command to end")
		if res.code != exitExpired || !strings.Contains(res.stdout, `"status": "dismissed"`) {
			t.Fatalf("exit %d stdout %s", res.code, res.stdout)
		}
	})
	t.Run("errors exit 3", func(t *testing.T) {
		ts := newTestServer(t)
		down := httptest.NewServer(nil)
		down.Close()
		for name, args := range map[string][]string{
			"wrong token":   {"ask", "--url", ts.URL, "--token", "gh_wrong", "--title", "x"},
			"server down":   {"ask", "--url", down.URL, "--token", ts.Agent, "--title", "x"},
			"no title":      {"ask", "--url", ts.URL, "--token", ts.Agent},
			"bad kind":      {"ask", "--url", ts.URL, "--token", ts.Agent, "--title", "x", "--kind", "nonsense"},
			"missing file":  {"ask", "--url", ts.URL, "--token", ts.Agent, "--title", "x", "--detail-file", "/nonexistent/plan.txt"},
			"bad option":    {"ask", "--url", ts.URL, "--token", ts.Agent, "--title", "x", "--option", "justanid"},
			"operator role": {"ask", "--url", ts.URL, "--token", ts.Operator.Token, "--title", "x"},
		} {
			t.Run(name, func(t *testing.T) {
				res := testkit.Recv(t, start(args, nil), "the command to end")
				if res.code != exitError || res.stdout != "" {
					t.Fatalf("exit %d stdout %q, want %d and nothing", res.code, res.stdout, exitError)
				}
			})
		}
		if n, _ := ts.Store.CountOpen(context.Background()); n != 0 {
			t.Fatalf("%d requests filed by failing asks", n)
		}
	})
}
