package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehousehq/gatehouse/api"
)

// TestBrowserRemember remembers an allow on the page and revokes it there, on
// a phone and on a desktop: the control shows the rule before the click, a
// later filing resolves by itself, and after revoke it waits for a person.
func TestBrowserRemember(t *testing.T) {
	needChromium(t)
	e := startPage(t, "sqlite")
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			b := newBrowser(t, vp.w, vp.h)
			b.login(e)
			sess := "s-" + vp.name
			r := e.shell("npm test", sess)
			sel := "#req-" + r.ID + " "

			b.run("open Remember…",
				chromedp.WaitVisible(css(sel+`[data-testid="remember-open"]`)),
				chromedp.Click(css(sel+`[data-testid="remember-open"]`)),
				chromedp.WaitVisible(css(sel+`[data-testid="remember-rule"]`)),
			)
			rule := value(b, "rule", chromedp.Text(css(sel+`[data-testid="remember-rule"]`)))
			words := value(b, "words", chromedp.Text(css(sel+`[data-testid="remember-words"]`)))
			if rule != `match: {tool: 'Bash', command: '^npm test$'}` || words != "exactly npm test" {
				t.Fatalf("the control shows %q / %q", words, rule)
			}
			b.noOverflow("the open control")
			value(b, "for 15 minutes", chromedp.Evaluate[bool](fmt.Sprintf(
				`(function(){ const s = document.querySelector(%q); s.value = "15m"; return s.value === "15m"; })()`, sel+`[data-testid="remember-for"]`)))
			b.run("allow and remember",
				chromedp.Click(css(sel+`[data-testid="remember-allow"]`)),
				chromedp.WaitNotPresent(card(r.ID)),
			)
			got, err := e.agent.Get(context.Background(), r.ID)
			if err != nil || got.Decision == nil || *got.Decision != "once" {
				t.Fatalf("decision %+v %v", got, err)
			}

			later := e.shell("npm test", sess)
			if later.Status != "resolved" || later.DecidedVia == nil || *later.DecidedVia != "remembered" || later.GrantID == nil {
				t.Fatalf("later: %s via %v", later.Status, later.DecidedVia)
			}
			grant := `[data-testid="remembered-grant"][data-grant-id="` + *later.GrantID + `"]`
			b.run("the Remembered section lists it",
				chromedp.Navigate(e.url+"/"),
				chromedp.WaitVisible(css(grant)),
			)
			text := value(b, "grant", chromedp.Text(css(grant)))
			for _, want := range []string{"exactly npm test", `^npm test$`, "session s-" + vp.name[:1], "operator:ann", "once", "Revoke"} {
				if !strings.Contains(text, want) {
					t.Errorf("the grant's row does not say %q: %q", want, text)
				}
			}
			b.noOverflow("the Remembered section")
			b.run("revoke",
				chromedp.Click(css(grant+` [data-testid="revoke"]`)),
				chromedp.WaitVisible(css(`[data-testid="filters"]`)),
				chromedp.WaitNotPresent(css(grant)),
			)
			if again := e.shell("npm test", sess); again.Status != "open" {
				t.Fatalf("after revoke: %s via %v", again.Status, again.DecidedVia)
			}
			var list api.RememberedList
			if err := e.operator.Do(context.Background(), "GET", "/v1/remembered", nil, nil, &list); err != nil {
				t.Fatal(err)
			}
			for _, g := range list.Remembered {
				if g.ID == *later.GrantID && (g.RevokedBy == nil || *g.RevokedBy != "operator:ann" || g.Uses != 1) {
					t.Fatalf("revoked grant %+v", g)
				}
			}
			b.flush()
			if errs := b.consoleErrors(); len(errs) > 0 {
				t.Errorf("console errors: %v", errs)
			}
		})
	}
}

// noOverflow fails when the page scrolls sideways: nothing may be wider than
// the screen.
func (b *tab) noOverflow(what string) {
	b.t.Helper()
	if !value(b, "overflow", chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`)) {
		b.t.Errorf("%s is wider than the screen", what)
	}
}
