package views_test

import (
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehousehq/gatehouse/views"
)

func text(s *goquery.Selection, id string) string {
	return strings.Join(strings.Fields(s.Find(`[data-testid="`+id+`"]`).Text()), " ")
}

func TestRuntimesSection(t *testing.T) {
	t.Run("each runtime with its forwarding health", func(t *testing.T) {
		l := views.RuntimeList{Now: now, Rows: []views.RuntimeRow{
			{ID: "rt_1", Name: "laptop", Machine: "m1", CallbackURL: "http://127.0.0.1:9/hook", LastSeenAt: now.Add(-2 * time.Minute),
				LastResult: "http 503", LastResultAt: now.Add(-30 * time.Second), Failures: 3, Pending: 2},
			{ID: "rt_2", Name: "ci", Machine: "m2", LastSeenAt: now.Add(-time.Hour)},
		}}
		doc := render(t, views.RuntimesSection(l))
		rows := doc.Find(`[data-testid="runtime-row"]`)
		if rows.Length() != 2 {
			t.Fatalf("%d rows", rows.Length())
		}
		first := rows.First()
		for id, want := range map[string]string{"runtime-name": "laptop", "runtime-machine": "m1", "runtime-callback": "http://127.0.0.1:9/hook",
			"runtime-seen": "2 minutes ago", "runtime-delivery": "http 503, 30 seconds ago", "runtime-failures": "3", "runtime-pending": "2"} {
			if got := text(first, id); got != want {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		second := rows.Eq(1)
		if got := text(second, "runtime-callback"); got != "pull" {
			t.Errorf("pull runtime callback = %q", got)
		}
		if got := text(second, "runtime-delivery"); got != "none yet" {
			t.Errorf("no delivery = %q", got)
		}
	})
	t.Run("none", func(t *testing.T) {
		doc := render(t, views.RuntimesSection(views.RuntimeList{Now: now}))
		if got := text(doc.Selection, "runtimes-empty"); got != "No runtimes registered" {
			t.Errorf("empty = %q", got)
		}
		if doc.Find("table").Length() != 0 {
			t.Error("a table with no rows")
		}
	})
}

func TestDevicesSection(t *testing.T) {
	t.Run("kind, the token's tail, registered and last result", func(t *testing.T) {
		l := views.DeviceList{Now: now, Rows: []views.DeviceRow{
			{ID: "dev_1", Kind: "apns", Name: "phone", Operator: "operator:ann", TokenTail: "…c0ffee42", CreatedAt: now.Add(-3 * time.Hour),
				LastResult: "delivered", LastAt: now.Add(-time.Minute)},
			{ID: "dev_2", Kind: "webpush", Name: "browser", TokenTail: "…abcdefgh", CreatedAt: now.Add(-49 * time.Hour), LastResult: "gone", Retired: true},
		}}
		doc := render(t, views.DevicesSection(l))
		rows := doc.Find(`[data-testid="device-row"]`)
		if rows.Length() != 2 {
			t.Fatalf("%d rows", rows.Length())
		}
		for id, want := range map[string]string{"device-kind": "APNs", "device-token": "…c0ffee42", "device-registered": "3 hours ago",
			"device-result": "delivered, 1 minute ago"} {
			if got := text(rows.First(), id); got != want {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		if got := text(rows.Eq(1), "device-kind"); got != "Web Push" {
			t.Errorf("kind = %q", got)
		}
		if r, _ := rows.Eq(1).Attr("data-retired"); r != "true" {
			t.Errorf("retired = %q", r)
		}
	})
	t.Run("none", func(t *testing.T) {
		doc := render(t, views.DevicesSection(views.DeviceList{Now: now}))
		if got := text(doc.Selection, "devices-empty"); got != "No devices" {
			t.Errorf("empty = %q", got)
		}
	})
}

func TestRulesSection(t *testing.T) {
	t.Run("the file and each rule", func(t *testing.T) {
		l := views.RuleList{Loaded: true, File: "/etc/gatehouse/rules.yaml", Digest: "0123456789abcdef0123", LoadedAt: now, Rules: []views.RuleRow{
			{Name: "git-read", Line: 2, Action: "approve", Summary: "approve Bash commands matching ^git status"},
			{Name: "slow-deny", Line: 7, Action: "hold", Window: "1m30s", Then: "deny", Summary: "hold high risk 1m30s, then deny"},
		}}
		doc := render(t, views.RulesSection(l))
		if got := text(doc.Selection, "rules-path"); got != "/etc/gatehouse/rules.yaml" {
			t.Errorf("file = %q", got)
		}
		if d, _ := doc.Find(`[data-testid="rules-digest"]`).Attr("title"); d != "0123456789abcdef0123" {
			t.Errorf("digest = %q", d)
		}
		if got := text(doc.Selection, "rules-loaded"); got != "2026-11-29 12:00:00 UTC" {
			t.Errorf("loaded = %q", got)
		}
		hold := doc.Find(`[data-testid="rule-row"][data-name="slow-deny"]`)
		for id, want := range map[string]string{"rule-name": "slow-deny", "rule-line": "7", "rule-action": "hold",
			"rule-window": "1m30s then deny", "rule-summary": "hold high risk 1m30s, then deny"} {
			if got := text(hold, id); got != want {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
	})
	t.Run("no rules file", func(t *testing.T) {
		doc := render(t, views.RulesSection(views.RuleList{}))
		if got := text(doc.Selection, "rules-empty"); got != "No rules file: every request goes to the operator" {
			t.Errorf("empty = %q", got)
		}
	})
}

func TestSystemPage(t *testing.T) {
	t.Run("a section without its source is left out", func(t *testing.T) {
		doc := render(t, views.SystemPage(views.System{Page: page(), Runtimes: &views.RuntimeList{Now: now}, Now: now}))
		if doc.Find(`[data-testid="runtimes"]`).Length() != 1 {
			t.Error("no runtimes section")
		}
		if doc.Find(`[data-testid="devices"]`).Length()+doc.Find(`[data-testid="rules"]`).Length() != 0 {
			t.Error("a section shown without its source")
		}
		if href, _ := doc.Find(`[data-testid="system-link"]`).Attr("href"); href != "/system" {
			t.Errorf("header link = %q", href)
		}
	})
}
