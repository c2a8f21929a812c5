package views_test

import (
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gatehousehq/gatehouse/views"
)

// claudeCard is what the Claude Code hook files for `git push origin main`.
func claudeCard(id, session, cwd string) views.Card {
	return views.Card{
		ID: id, Kind: "permission", Status: "open", Version: 1,
		Title: "Run: git push origin main", Summary: "Claude Code asks to use Bash", Tool: "Bash", Command: "git push origin main",
		CreatedBy: "agent:claude", CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(4 * time.Minute),
		Session: session, Cwd: cwd,
		Options: []views.Option{
			{ID: "once", Label: "Allow once", Effect: "allow"},
			{ID: "project", Label: "Allow for project", Effect: "allow", Saves: "Bash(git push *) to project settings (.claude/settings.local.json)"},
			{ID: "deny", Label: "Deny", Effect: "deny"},
		},
	}
}

func words(s *goquery.Selection, testid string) string {
	return strings.Join(strings.Fields(s.Find(`[data-testid="`+testid+`"]`).Text()), " ")
}

func TestCardWho(t *testing.T) {
	t.Run("two identical commands from two sessions render distinguishably", func(t *testing.T) {
		a := claudeCard("req_a", "cabcfecf-230c-4cc4-9bfb-dc5c563ea4e3", "/home/dev/project")
		b := claudeCard("req_b", "7d1e0b42-99aa-4c3e-8f00-0123456789ab", "/home/dev/other")
		x := views.Ctx{Now: now}
		doc := render(t, views.InboxList([]views.Card{a, b}, x, ""))
		ca, cb := doc.Find("#req-req_a"), doc.Find("#req-req_b")
		if words(ca, "card-command") != words(cb, "card-command") || words(ca, "card-title") != words(cb, "card-title") {
			t.Fatal("the two cards should carry the same command and title")
		}
		if got := words(ca, "card-session"); got != "cabcfecf" {
			t.Errorf("session = %q, want the first 8 characters", got)
		}
		if got := ca.Find(`[data-testid="card-session"]`).AttrOr("title", ""); got != a.Session {
			t.Errorf("session title = %q, want the whole id on hover", got)
		}
		if got := words(cb, "card-session"); got != "7d1e0b42" {
			t.Errorf("session = %q", got)
		}
		if words(ca, "card-cwd") != "/home/dev/project" || words(cb, "card-cwd") != "/home/dev/other" {
			t.Errorf("cwd = %q / %q", words(ca, "card-cwd"), words(cb, "card-cwd"))
		}
		if words(ca, "card-who") == words(cb, "card-who") {
			t.Fatalf("both cards say %q: an operator cannot tell them apart", words(ca, "card-who"))
		}
	})

	t.Run("the same session in two directories is still told apart", func(t *testing.T) {
		doc := render(t, views.InboxList([]views.Card{claudeCard("req_a", "s-1", "/a"), claudeCard("req_b", "s-1", "/b")}, views.Ctx{Now: now}, ""))
		if words(doc.Find("#req-req_a"), "card-who") == words(doc.Find("#req-req_b"), "card-who") {
			t.Fatal("same who line")
		}
	})

	t.Run("names the runtime and its machine", func(t *testing.T) {
		c := claudeCard("req_a", "s-1", "/a")
		c.Runtime, c.Machine = "claude-host", "dev-laptop.local"
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if got := words(doc.Selection, "card-runtime"); got != "claude-host on dev-laptop.local" {
			t.Errorf("runtime = %q", got)
		}
		if got := words(doc.Selection, "card-machine"); got != "dev-laptop.local" {
			t.Errorf("machine = %q", got)
		}
	})

	t.Run("no runtime, session or directory: only the filer", func(t *testing.T) {
		c := openCard()
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		for _, id := range []string{"card-runtime", "card-session", "card-cwd"} {
			if doc.Find(`[data-testid="`+id+`"]`).Length() != 0 {
				t.Errorf("%s drawn for a request without it", id)
			}
		}
		if got := words(doc.Selection, "card-created-by"); got != "agent:claude" {
			t.Errorf("filer = %q", got)
		}
	})
}

func TestCardButtons(t *testing.T) {
	doc := render(t, views.CardView(claudeCard("req_a", "s-1", "/a"), views.Ctx{Now: now}, ""))
	effects := map[string]string{}
	doc.Find(`button[data-testid="option"]`).Each(func(_ int, b *goquery.Selection) {
		effects[words(b, "option-label")] = words(b, "option-effect")
	})
	want := map[string]string{
		"Allow once":        "lets this command run once",
		"Allow for project": "lets this command run and saves Bash(git push *) to project settings (.claude/settings.local.json)",
		"Deny":              "blocks this command",
	}
	for l, w := range want {
		if effects[l] != w {
			t.Errorf("%s says %q, want %q", l, effects[l], w)
		}
	}
	t.Run("the saved rule is its own element", func(t *testing.T) {
		if got := words(doc.Find(`button[data-option="project"]`), "option-saves"); !strings.HasPrefix(got, "Bash(git push *)") {
			t.Errorf("saves = %q", got)
		}
		if doc.Find(`button[data-option="once"] [data-testid="option-saves"]`).Length() != 0 {
			t.Error("Allow once claims to save a rule")
		}
	})
	t.Run("an allow labelled Deny still says it allows", func(t *testing.T) {
		c := claudeCard("req_a", "s-1", "/a")
		c.Options = []views.Option{{ID: "deny", Label: "Deny", Effect: "allow"}}
		d := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if got := words(d.Find(`button[data-option="deny"]`), "option-effect"); !strings.HasPrefix(got, "lets") {
			t.Errorf("effect = %q", got)
		}
	})
}

func TestCardRisk(t *testing.T) {
	t.Run("no badge when the filer gave no risk", func(t *testing.T) {
		doc := render(t, views.CardView(claudeCard("req_a", "s-1", "/a"), views.Ctx{Now: now}, ""))
		if doc.Find(`[data-testid="card-risk"]`).Length() != 0 {
			t.Fatal("a risk badge on a request without risk")
		}
		var order []string
		doc.Find(`button[data-testid="option"]`).Each(func(_ int, b *goquery.Selection) { order = append(order, b.AttrOr("data-option", "")) })
		if strings.Join(order, ",") != "once,project,deny" {
			t.Errorf("order = %v: without risk the filer's order stands", order)
		}
	})
	t.Run("high risk: deny first, and what expiry does is spelled out", func(t *testing.T) {
		c := claudeCard("req_a", "s-1", "/a")
		c.Risk, c.DefaultOption, c.Command = "high", "deny", "rm -rf ./build"
		doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
		if got := words(doc.Selection, "card-risk"); got != "high risk" {
			t.Errorf("badge = %q", got)
		}
		if first := doc.Find(`button[data-testid="option"]`).First().AttrOr("data-option", ""); first != "deny" {
			t.Errorf("first button = %q, want deny", first)
		}
		if got := words(doc.Selection, "card-expires"); got != "Deny on expiry in 4 minutes" {
			t.Errorf("expiry = %q", got)
		}
	})
}

func TestCardResolved(t *testing.T) {
	at := now.Add(-2 * time.Minute)
	for name, tc := range map[string]struct {
		status, via, by, want string
	}{
		"by a person": {"resolved", "page", "operator:ann", "Allow once — approved by operator:ann via page"},
		"by a rule":   {"resolved", "rule:ci-reads", "rule:ci-reads", "Allow once — approved by rule ci-reads"},
		"on expiry":   {"resolved", "expiry", "", "Allow once — approved as the default, on expiry"},
	} {
		t.Run(name, func(t *testing.T) {
			c := claudeCard("req_a", "s-1", "/a")
			c.Status, c.Decision, c.DecidedVia, c.DecidedBy, c.ResolvedAt = tc.status, "once", tc.via, tc.by, at
			doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
			if got := words(doc.Selection, "card-outcome"); !strings.Contains(got, tc.want) {
				t.Errorf("outcome = %q, want %q", got, tc.want)
			}
			when := doc.Find(`[data-testid="card-decided-at"]`)
			if got := strings.Join(strings.Fields(when.Text()), " "); got != "Decided 2026-11-29 11:58:00 UTC" {
				t.Errorf("decided = %q", got)
			}
			if dt := when.Find("time").AttrOr("datetime", ""); dt != "2026-11-29T11:58:00Z" {
				t.Errorf("datetime = %q", dt)
			}
			if _, ok := when.Find("time").Attr("data-local"); !ok {
				t.Error("the time is not marked for the browser's own zone")
			}
		})
	}
}

// The filer labels its allow "Deny": the settled card says it was approved.
func TestCardOutcomeSaysTheEffectNotTheLabel(t *testing.T) {
	c := claudeCard("req_a", "s-1", "/a")
	for i := range c.Options {
		if c.Options[i].ID == "once" {
			c.Options[i].Label = "Deny"
		}
	}
	c.Status, c.Decision, c.DecidedVia, c.DecidedBy, c.ResolvedAt = "resolved", "once", "page", "operator:ann", now
	doc := render(t, views.CardView(c, views.Ctx{Now: now}, ""))
	if got := words(doc.Selection, "card-outcome"); !strings.Contains(got, "Deny — approved by operator:ann via page") {
		t.Errorf("outcome = %q: an allow reads as a deny", got)
	}
}

func TestAuditTrail(t *testing.T) {
	a := views.Audit{RequestID: "req_1", Rows: []views.AuditRow{
		{At: now, Version: 2, Action: "decide", Actor: "operator:ann", Via: "page",
			Detail: []views.KV{{Key: "decision", Value: "once"}, {Key: "note", Value: "go ahead"}}},
	}}
	doc := render(t, views.AuditTrail(a, ""))
	row := doc.Find(`[data-testid="audit-row"]`)
	var lines []string
	row.Find(`[data-testid="audit-detail"] div`).Each(func(_ int, d *goquery.Selection) {
		lines = append(lines, d.Find("dt").Text()+": "+d.Find("dd").Text())
	})
	if got := strings.Join(lines, "\n"); got != "decision: once\nnote: go ahead" {
		t.Errorf("detail lines = %q", got)
	}
	if got := row.Find("time").Text(); got != "2026-11-29 12:00:00 UTC" {
		t.Errorf("time = %q: the server writes UTC and says so", got)
	}
	labels := map[string]bool{}
	row.Find("td").Each(func(_ int, td *goquery.Selection) { labels[td.AttrOr("data-label", "")] = true })
	for _, l := range []string{"When", "Version", "What", "Who", "Via"} {
		if !labels[l] {
			t.Errorf("no cell labelled %q for the stacked phone layout", l)
		}
	}
	t.Run("travels as a fragment with a stable id", func(t *testing.T) {
		doc := render(t, views.OOBAudit(a))
		if v, _ := doc.Find(`#audit-req_1`).Attr("hx-swap-oob"); v != "true" {
			t.Errorf("oob = %q", v)
		}
	})
}

func TestLayoutHeader(t *testing.T) {
	doc := render(t, views.InboxPage(views.Inbox{Page: page(), Filter: views.Filter{Status: "open"}, Now: now}))
	if got := words(doc.Selection, "push-toggle"); got != "Enable notifications" {
		t.Errorf("push toggle = %q: it must be there from the first paint", got)
	}
	if _, ok := doc.Find(`[data-testid="push-toggle"]`).Attr("data-push-toggle"); !ok {
		t.Error("push.js cannot find the toggle")
	}
	if doc.Find(`dialog#shortcuts`).Length() != 1 {
		t.Error("no shortcuts help")
	}
	for _, k := range []string{"j", "k", "o", "a", "d", "n", "?"} {
		found := false
		doc.Find(`dialog#shortcuts kbd`).Each(func(_ int, s *goquery.Selection) { found = found || s.Text() == k })
		if !found {
			t.Errorf("shortcut %q not listed", k)
		}
	}
	t.Run("the shortcuts' switch and hint are in the footer landmark, the confirmation ready", func(t *testing.T) {
		foot := doc.Find(`footer#shortcuts-foot`)
		if foot.Find(`input#shortcuts-on[type="checkbox"]`).Length() != 1 || foot.Find(`label`).Length() != 1 {
			t.Error("no labelled switch in the footer")
		}
		if doc.Find(`dialog#confirm-key [data-testid="confirm-key-cancel"][autofocus]`).Length() != 1 {
			t.Error("the high-risk confirmation does not start on Cancel")
		}
	})
	t.Run("the connection is a live region that starts by saying it connects", func(t *testing.T) {
		c := doc.Find(`[data-testid="connection"]`)
		if role, _ := c.Attr("role"); role != "status" || strings.TrimSpace(c.Text()) != "connecting" {
			t.Errorf("connection: role %q, text %q", role, c.Text())
		}
	})
	t.Run("logged out: no toggle, no help", func(t *testing.T) {
		d := render(t, views.LoginPage(views.Login{}))
		if d.Find(`[data-testid="push-toggle"]`).Length() != 0 || d.Find(`dialog#shortcuts`).Length() != 0 {
			t.Error("drawn for a visitor")
		}
	})
}
