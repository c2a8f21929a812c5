package views_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/gatehousehq/gatehouse/views"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

func openCard() views.Card {
	return views.Card{
		ID: "req_1", Kind: "permission", Status: "open", Version: 3, Risk: "high",
		Title: "Run tests", Summary: "The agent wants to run the suite", Tool: "Bash", Command: "go test ./...",
		CreatedBy: "agent:claude", CreatedAt: now.Add(-5 * time.Minute), ExpiresAt: now.Add(10 * time.Minute),
		Options: []views.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
	}
}

func page() views.Page {
	return views.Page{OpenCount: 2, CSRF: "csrf_abc", Operator: "ann", WSURL: "/ws?status=open",
		Assets: views.Assets{CSS: "/static/app.css?v=1", Scripts: []string{"/static/vendor/htmx/htmx.min.js?v=1", "/static/app.js?v=1"}}}
}

func TestCard(t *testing.T) {
	t.Run("open card shows what to decide and posts the version", func(t *testing.T) {
		doc := render(t, views.CardView(openCard(), views.Ctx{CSRF: "csrf_abc", Back: "/", Now: now}, ""))
		card := doc.Find(`#req-req_1[data-testid="card"]`)
		if card.Length() != 1 {
			t.Fatalf("no card with stable id")
		}
		checks := map[string]string{
			"card-kind": "permission", "card-risk": "high risk", "card-title": "Run tests",
			"card-summary": "The agent wants to run the suite", "card-tool": "Bash",
			"card-created-by": "agent:claude", "card-age": "5 minutes ago", "card-time-left": "10 minutes",
			"card-expiry-outcome": "Expires undecided",
		}
		for id, want := range checks {
			if got := strings.TrimSpace(card.Find(`[data-testid="` + id + `"]`).Text()); got != want {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		if got := card.Find(`[data-testid="card-command"]`).Text(); !strings.Contains(got, "go test ./...") {
			t.Errorf("command = %q", got)
		}
		if exp, _ := card.Find(`[data-testid="card-time-left"]`).Attr("data-expires"); exp != "2026-11-29T12:10:00Z" {
			t.Errorf("data-expires = %q", exp)
		}
		form := card.Find(`form[data-testid="decide-form"]`)
		if a, _ := form.Attr("action"); a != "/requests/req_1/decide" {
			t.Errorf("form action = %q", a)
		}
		if m, _ := form.Attr("method"); m != "post" {
			t.Errorf("form method = %q", m)
		}
		if v, _ := form.Find(`input[name="version"]`).Attr("value"); v != "3" {
			t.Errorf("version = %q", v)
		}
		if v, _ := form.Find(`input[name="csrf"]`).Attr("value"); v != "csrf_abc" {
			t.Errorf("csrf = %q", v)
		}
		var labels []string
		form.Find(`button[data-testid="option"]`).Each(func(_ int, b *goquery.Selection) {
			if n, _ := b.Attr("name"); n != "decision" {
				t.Errorf("button name = %q", n)
			}
			if ty, _ := b.Attr("type"); ty != "submit" {
				t.Errorf("button type = %q", ty)
			}
			labels = append(labels, b.Find(`[data-testid="option-label"]`).Text())
		})
		// High risk: the safe choice comes first.
		if strings.Join(labels, "|") != "Deny|Allow once" {
			t.Errorf("buttons = %q", labels)
		}
		if form.Find(`textarea[name="note"]`).Length() != 1 {
			t.Error("no note field")
		}
		if form.Find(`[name="answer"]`).Length() != 0 {
			t.Error("answer field on a request that takes none")
		}
		if card.Find(`[data-testid="card-held"]`).Length() != 0 {
			t.Error("HELD badge on a card that is not held")
		}
	})

	t.Run("question with free text offers an answer field", func(t *testing.T) {
		c := openCard()
		c.Kind, c.AllowAnswer, c.Options = "question", true, nil
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if doc.Find(`textarea[name="answer"]`).Length() != 1 || doc.Find(`[data-testid="send-answer"]`).Length() != 1 {
			t.Fatal("no answer field or send button")
		}
	})

	t.Run("informational item is dismissed, not decided", func(t *testing.T) {
		c := openCard()
		c.Kind, c.Options = "waiting", nil
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if a, _ := doc.Find(`form[data-testid="dismiss-form"]`).Attr("action"); a != "/requests/req_1/dismiss" {
			t.Fatalf("dismiss action = %q", a)
		}
	})

	t.Run("held card has a HELD badge", func(t *testing.T) {
		c := openCard()
		c.Held, c.HoldRule, c.HoldThen, c.HoldUntil = true, "night-deny", "deny", now.Add(time.Minute)
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		held := doc.Find(`[data-testid="card-held"]`)
		if held.Text() != "HELD" {
			t.Fatalf("held badge = %q", held.Text())
		}
		if got := held.AttrOr("title", ""); got != `rule night-deny decides "Deny" at 12:01:00 UTC unless you decide first` {
			t.Fatalf("held title = %q", got)
		}
	})

	t.Run("resolved by a rule says so and offers no buttons", func(t *testing.T) {
		c := openCard()
		c.Status, c.Decision, c.DecidedVia, c.DecidedBy, c.Version = "resolved", "once", "rule:ci-tests", "rule:ci-tests", 4
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if got := doc.Find(`[data-testid="card-outcome"]`).Text(); !strings.Contains(got, "approved by rule ci-tests") {
			t.Errorf("outcome = %q", got)
		}
		if doc.Find("button").Length() != 0 || doc.Find("form").Length() != 0 {
			t.Error("a resolved card offers a decision")
		}
		if doc.Find(`[data-testid="card-expires"]`).Length() != 0 {
			t.Error("a resolved card counts down")
		}
	})

	t.Run("actuation conflict tells the operator to open the session", func(t *testing.T) {
		c := openCard()
		c.Status, c.Decision, c.DecidedVia, c.DecidedBy = "resolved", "once", "page", "operator:ann"
		c.Actuation, c.Session = views.Actuation{State: "conflict", Attempts: 1}, "sess-42"
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		act := doc.Find(`[data-testid="card-actuation"]`)
		if s, _ := act.Attr("data-state"); s != "conflict" {
			t.Errorf("state = %q", s)
		}
		if txt := act.Text(); !strings.Contains(txt, "Open the session") || !strings.Contains(txt, "sess-42") {
			t.Errorf("actuation = %q", txt)
		}
		if got := doc.Find(`[data-testid="card-outcome"]`).Text(); !strings.Contains(got, "Allow once — approved by operator:ann via page") {
			t.Errorf("outcome = %q", got)
		}
	})

	t.Run("text is escaped", func(t *testing.T) {
		c := openCard()
		c.Title = `<script>alert(1)</script>`
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if doc.Find("script").Length() != 0 {
			t.Fatal("title rendered as markup")
		}
	})
}

func TestInboxPage(t *testing.T) {
	t.Run("lists cards, counts in the title, loads only script files", func(t *testing.T) {
		in := views.Inbox{Page: page(), Filter: views.Filter{Status: "open"}, Cards: []views.Card{openCard()}, Now: now}
		doc := render(t, views.InboxPage(in))
		if got := doc.Find("title").Text(); got != "(2) Gatehouse" {
			t.Errorf("title = %q", got)
		}
		// A screen reader hears the count in words; the number is what shows.
		if got := doc.Find(`[data-testid="open-count"]`).Text(); got != "2 open requests" {
			t.Errorf("count = %q", got)
		}
		if got := doc.Find(`[data-testid="open-count"] .sr-only`).Text(); got != " open requests" {
			t.Errorf("count's words = %q", got)
		}
		if got := doc.Find("h1").Text(); got != "Open requests" {
			t.Errorf("h1 = %q", got)
		}
		if doc.Find(`#inbox-list [data-testid="card"]`).Length() != 1 {
			t.Error("card not in the list")
		}
		doc.Find("script").Each(func(_ int, s *goquery.Selection) {
			if src, ok := s.Attr("src"); !ok || src == "" || strings.TrimSpace(s.Text()) != "" {
				t.Errorf("inline script: %q", s.Text())
			}
		})
		doc.Find("*").Each(func(_ int, s *goquery.Selection) {
			for _, a := range s.Nodes[0].Attr {
				if strings.HasPrefix(a.Key, "on") || strings.HasPrefix(a.Key, "hx-on") || a.Key == "style" {
					t.Errorf("inline handler or style %s=%q", a.Key, a.Val)
				}
			}
		})
		if got, _ := doc.Find("main").Attr("ws-connect"); got != "/ws?status=open" {
			t.Errorf("ws-connect = %q", got)
		}
		if got, _ := doc.Find("body").Attr("hx-headers"); !strings.Contains(got, "csrf_abc") {
			t.Errorf("hx-headers = %q", got)
		}
		if got, _ := doc.Find(`[data-testid="filter-status-open"]`).Attr("aria-current"); got != "true" {
			t.Error("open filter not marked current")
		}
		if got, _ := doc.Find(`[data-testid="filter-kind-question"]`).Attr("href"); got != "/?kind=question" {
			t.Errorf("kind filter href = %q", got)
		}
		if got, _ := doc.Find(`[data-testid="filter-status-resolved"]`).Attr("href"); got != "/?status=resolved" {
			t.Errorf("status filter href = %q", got)
		}
	})

	t.Run("empty inbox says nothing is waiting", func(t *testing.T) {
		p := page()
		p.OpenCount = 0
		doc := render(t, views.InboxPage(views.Inbox{Page: p, Filter: views.Filter{Status: "open"}, Now: now}))
		if got := doc.Find(`[data-testid="empty-state"]`).Text(); !strings.Contains(got, "Nothing is waiting") {
			t.Errorf("empty state = %q", got)
		}
		if got := doc.Find("title").Text(); got != "Gatehouse" {
			t.Errorf("title = %q", got)
		}
	})
}

func TestDetailPage(t *testing.T) {
	d := views.Detail{
		Page: page(), Card: openCard(), Detail: "full diff here",
		SourceRef: []views.KV{{Key: "session", Value: "s-1"}, {Key: "turn", Value: "7"}},
		Audit:     views.Audit{RequestID: "req_1", Rows: []views.AuditRow{{At: now, Version: 1, Action: "create", Actor: "agent:claude", Via: "api"}}},
		Now:       now,
	}
	doc := render(t, views.DetailPage(d))
	if got := doc.Find(`[data-testid="detail-text"]`).Text(); got != "full diff here" {
		t.Errorf("detail = %q", got)
	}
	if got := doc.Find(`[data-testid="source-ref-session"]`).Text(); got != "s-1" {
		t.Errorf("source ref = %q", got)
	}
	if got := doc.Find(`[data-testid="audit-row"]`).Length(); got != 1 {
		t.Errorf("audit rows = %d", got)
	}
	if got := doc.Find(`h1[data-testid="card-title"]`).Text(); got != "Run tests" {
		t.Errorf("title = %q", got)
	}
	if v, _ := doc.Find(`input[name="back"]`).Attr("value"); v != "/requests/req_1" {
		t.Errorf("back = %q", v)
	}
}

func TestLoginPage(t *testing.T) {
	doc := render(t, views.LoginPage(views.Login{Page: views.Page{}, Error: "That token is not an operator token."}))
	form := doc.Find(`form[data-testid="login-form"]`)
	if a, _ := form.Attr("action"); a != "/login" {
		t.Errorf("action = %q", a)
	}
	if form.Find(`input[name="token"]`).Length() != 1 {
		t.Error("no field named token")
	}
	if got := doc.Find(`[data-testid="login-error"]`).Text(); got == "" {
		t.Error("error not shown")
	}
	if doc.Find(`[data-testid="logout-form"]`).Length() != 0 {
		t.Error("logout offered to a logged-out visitor")
	}
}

func TestNotice(t *testing.T) {
	cur := openCard()
	cur.Status, cur.Decision, cur.DecidedBy, cur.DecidedVia = "resolved", "deny", "operator:bob", "page"
	doc := render(t, views.NoticeView(views.Notice{Kind: "conflict", Title: "Decided elsewhere", Current: &cur}, views.Ctx{Now: now}))
	n := doc.Find(`[data-testid="notice"]`)
	if k, _ := n.Attr("data-kind"); k != "conflict" {
		t.Errorf("kind = %q", k)
	}
	if got := n.Find(`[data-testid="notice-current"]`).Text(); !strings.Contains(got, "Deny — denied by operator:bob") {
		t.Errorf("current = %q", got)
	}
}

func TestFragments(t *testing.T) {
	x := views.Ctx{Now: now}
	t.Run("insert", func(t *testing.T) {
		doc := render(t, views.OOBInsert(openCard(), x))
		if v, _ := doc.Find(`[hx-swap-oob]`).First().Attr("hx-swap-oob"); v != "afterbegin:#inbox-list" {
			t.Errorf("oob = %q", v)
		}
		if doc.Find(`#req-req_1`).Length() != 1 {
			t.Error("card missing")
		}
	})
	t.Run("replace", func(t *testing.T) {
		doc := render(t, views.OOBReplace(openCard(), x))
		if v, _ := doc.Find(`#req-req_1`).Attr("hx-swap-oob"); v != "true" {
			t.Errorf("oob = %q", v)
		}
	})
	t.Run("remove", func(t *testing.T) {
		doc := render(t, views.OOBRemove("req_1"))
		if v, _ := doc.Find(`#req-req_1`).Attr("hx-swap-oob"); v != "delete" {
			t.Errorf("oob = %q", v)
		}
	})
	t.Run("count", func(t *testing.T) {
		doc := render(t, views.OOBCount(7))
		c := doc.Find(`#open-count`)
		if v, _ := c.Attr("hx-swap-oob"); v != "true" || c.Text() != "7 open requests" {
			t.Errorf("count = %q oob %q", c.Text(), v)
		}
		if v, _ := c.Attr("data-count"); v != "7" {
			t.Errorf("data-count = %q", v)
		}
	})
	t.Run("list", func(t *testing.T) {
		doc := render(t, views.OOBList([]views.Card{openCard()}, x))
		l := doc.Find(`#inbox-list`)
		if v, _ := l.Attr("hx-swap-oob"); v != "true" || l.Find(`[data-testid="card"]`).Length() != 1 {
			t.Errorf("list oob %q", v)
		}
		if l.Find(`input[name="csrf"]`).Length() != 0 {
			t.Error("a fragment without a CSRF token renders an empty csrf field")
		}
	})
}

func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0 seconds", time.Second: "1 second", 90 * time.Second: "1 minute",
		3 * time.Hour: "3 hours", 72 * time.Hour: "3 days", -time.Minute: "0 seconds",
	} {
		if got := views.Span(d); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}
