package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// TestPendingBodyOnCard: the operator approves a body they can read. The
// filing carries the body (its first 8 KiB when longer); a whole body must
// match body_sha256; the card and the request's page show it, pretty-printed
// when it is JSON, with its size; the digest is what it always was.
func TestPendingBodyOnCard(t *testing.T) {
	ctx := context.Background()
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	_, secret, err := e.store.CreateToken(ctx, models.RoleRuntime, "gate")
	if err != nil {
		t.Fatal(err)
	}
	rt := client.New(e.url, secret)
	target := func(body string) api.NewPending {
		return api.NewPending{Sandbox: "sb-1", Policy: "unmatched", Middleware: "gatehouse-gate", Method: "PATCH",
			Host: "api.github.com", Port: 443, Path: "/repos/acme/widgets", BodySHA256: hexSHA(body)}
	}
	withBody := func(n api.NewPending, head string, size int64) api.NewPending {
		n.Body, n.BodySize = []byte(head), &size
		return n
	}
	file := func(t *testing.T, n api.NewPending) *api.PendingFiled {
		t.Helper()
		f, err := rt.FilePending(ctx, n)
		if err != nil {
			t.Fatalf("file: %v", err)
		}
		return f
	}
	detail := func(t *testing.T, f *api.PendingFiled) string {
		t.Helper()
		r, err := e.operator.Get(ctx, f.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Detail
	}

	body := `{"visibility":"public"}`
	pretty := "body: 23 bytes, JSON:\n{\n  \"visibility\": \"public\"\n}"
	f := file(t, withBody(target(body), body, int64(len(body))))
	t.Run("the card shows the body, pretty-printed, with its size", func(t *testing.T) {
		c := e.get(b, "/", http.StatusOK).Find("#req-" + f.RequestID)
		if got := c.Find(`[data-testid="card-exact"]`).Text(); !strings.Contains(got, pretty) || !strings.Contains(got, "method: PATCH") {
			t.Fatalf("card: %q", got)
		}
	})
	t.Run("the request's page shows it too", func(t *testing.T) {
		doc := e.get(b, "/requests/"+f.RequestID, http.StatusOK)
		if got := doc.Find(`[data-testid="detail-text"]`).Text(); !strings.Contains(got, pretty) {
			t.Fatalf("page detail: %q", got)
		}
	})
	t.Run("the digest does not change with the body", func(t *testing.T) {
		n := target(body)
		want := models.Digest(models.Target{Sandbox: n.Sandbox, Method: n.Method, Host: n.Host, Port: n.Port, Path: n.Path, BodySHA256: n.BodySHA256})
		if f.Digest != want {
			t.Fatalf("digest %s, want %s", f.Digest, want)
		}
	})
	t.Run("a body that does not match body_sha256 is refused", func(t *testing.T) {
		before := countRequests(t, e.store)
		_, err := rt.FilePending(ctx, withBody(target(body), `{"visibility":"private"}`, 24))
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != http.StatusBadRequest || ce.Code != "invalid_input" || !strings.Contains(ce.Detail, "body_sha256") {
			t.Fatalf("mismatched body: %v", err)
		}
		if countRequests(t, e.store) != before {
			t.Fatal("a refused filing filed a request")
		}
	})
	t.Run("a long body: the first 8 KiB and how many more bytes", func(t *testing.T) {
		head := strings.Repeat("a", api.MaxPendingBody)
		d := detail(t, file(t, withBody(target("not checked"), head, 20000)))
		if !strings.Contains(d, "body: 20000 bytes, text; the first 8192 shown, 11808 more bytes not shown:\n"+head) {
			t.Fatalf("detail: %.300q", d)
		}
	})
	t.Run("a partial body shorter than 8 KiB is refused", func(t *testing.T) {
		_, err := rt.FilePending(ctx, withBody(target("x"), "abc", 200))
		if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.Status != http.StatusBadRequest {
			t.Fatalf("partial body: %v", err)
		}
	})
	t.Run("more than 8 KiB sent is refused", func(t *testing.T) {
		big := strings.Repeat("a", api.MaxPendingBody+1)
		_, err := rt.FilePending(ctx, withBody(target(big), big, int64(len(big))))
		if ce := (*client.Error)(nil); !errors.As(err, &ce) || ce.Status != http.StatusBadRequest {
			t.Fatalf("9 KiB body: %v", err)
		}
	})
	t.Run("characters that hide are shown escaped", func(t *testing.T) {
		// An override inside a JSON string would show the operator "public"
		// written backwards; escaped, it reads as what it is.
		tricky := "{\"visibility\":\"\u202ecilbup\",\"note\":\"a\u200bb\\u0000\"}\r\n\x1b[2J"
		d := detail(t, file(t, withBody(target(tricky), tricky, int64(len(tricky)))))
		if strings.ContainsAny(d, "\u202e\u200b\r\x1b") || !strings.Contains(d, `\u202ecilbup`) || !strings.Contains(d, `\u001b[2J`) {
			t.Fatalf("detail: %q", d)
		}
	})
	t.Run("deep nesting is not blown up", func(t *testing.T) {
		deep := strings.Repeat("[", 4000) + strings.Repeat("]", 4000)
		d := detail(t, file(t, withBody(target(deep), deep, int64(len(deep)))))
		if len(d) > models.MaxDetail || !strings.Contains(d, "body: 8000 bytes, text:\n[[[") {
			t.Fatalf("detail of %d bytes: %.200q", len(d), d)
		}
	})
	t.Run("a filing without a body says so", func(t *testing.T) {
		if d := detail(t, file(t, target("anything"))); !strings.Contains(d, "body: not sent by the middleware") {
			t.Fatalf("detail: %q", d)
		}
	})
}

func hexSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func countRequests(t *testing.T, s *store.Store) int64 {
	t.Helper()
	var n int64
	if err := s.DB.Model(&models.Request{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}
