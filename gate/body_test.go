package gate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/client"
)

// TestAskShowsTheBody: the operator reads the body they approve. The gate
// sends it (its first 8 KiB when longer) with the filing, and the approval's
// detail shows it, pretty-printed when it is JSON, with its size.
func TestAskShowsTheBody(t *testing.T) {
	e := newEnv(t)
	detail := func(t *testing.T, requestID string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		r, err := client.New(e.gh.srv.URL, e.gh.operator).Get(ctx, requestID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Detail
	}
	t.Run("a JSON body, pretty-printed", func(t *testing.T) {
		body := `{"visibility":"public"}`
		id, req := e.ask(t, "PATCH", "/repos/acme/widgets", body)
		d := detail(t, req)
		if !strings.Contains(d, "body: 23 bytes, JSON:\n{\n  \"visibility\": \"public\"\n}") {
			t.Fatalf("the detail does not show the body:\n%s", d)
		}
		if g := e.grant(t, id); !strings.Contains(d, "body sha256: "+sha(body)) || g.Digest == "" {
			t.Fatalf("the detail lost the body's digest:\n%s", d)
		}
	})
	t.Run("a long body, its first 8 KiB and how much more", func(t *testing.T) {
		body := strings.Repeat("x", 20000)
		_, req := e.ask(t, "POST", "/repos/acme/widgets/pulls", body)
		d := detail(t, req)
		if !strings.Contains(d, "body: 20000 bytes, text; the first 8192 shown, 11808 more bytes not shown:\n"+strings.Repeat("x", 8192)) {
			t.Fatalf("the detail of a long body:\n%.400s", d)
		}
	})
	t.Run("no body", func(t *testing.T) {
		_, req := e.ask(t, "DELETE", "/repos/acme/widgets/git/refs/heads/x", "")
		if d := detail(t, req); !strings.Contains(d, "body: none (0 bytes)") {
			t.Fatalf("the detail of no body:\n%s", d)
		}
	})
}
