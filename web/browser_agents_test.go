package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
)

// TestBrowserAgents drives the Sessions view in Chromium on a phone and a
// laptop: a session's Stop, its moving on and its end show without a reload,
// who waits comes first, and nothing is wider than a 390 px screen.
func TestBrowserAgents(t *testing.T) {
	needChromium(t)
	e := startPage(t, "sqlite")
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			b := newBrowser(t, vp.w, vp.h)
			b.login(e)
			session := "5e55" + vp.name + "-0000-4000-8000-000000000001"
			e.sessionEvent(api.SessionEvent{Session: "0ld" + vp.name, Event: models.EventStarted, Cwd: "/srv/old"})
			b.run("open the Sessions view from the header",
				chromedp.Click(css(`[data-testid="agents-link"]`)),
				chromedp.WaitVisible(css(`[data-testid="session-list"]`)),
				chromedp.WaitReady(css(`[data-testid="connection"][data-state="live"]`)))
			// A reload would drop this mark: it proves the rows below came over the socket.
			value(b, "mark the page", chromedp.Evaluate[bool](`window.notReloaded = true; true`))

			t.Run("a session's Stop shows live, first, with its last message and where it runs", func(t *testing.T) {
				long := "Pushed the branch and opened the pull request; " + strings.Repeat("the_whole_path/without/any/spaces/", 8)
				e.sessionEvent(api.SessionEvent{Session: session, Event: models.EventWaiting, Message: long, CanReply: true,
					Cwd: "/home/dev/a-rather-long-project-directory-name/with/more/levels/below/it", Machine: "devbox.example.internal"})
				b.run("the row turns up", chromedp.WaitVisible(css(`[data-testid="session"][data-session="`+session+`"][data-state="waiting"]`)))
				first := value(b, "first row", chromedp.Evaluate[string](`document.querySelector('[data-testid="session"]').dataset.session`))
				if first != session {
					t.Errorf("first row = %q: who waits comes first", first)
				}
				if got := textOf(b, `[data-session="`+session+`"] [data-testid="session-last-message"]`); got != long {
					t.Errorf("last message = %q", got)
				}
				if got := textOf(b, `[data-session="`+session+`"] [data-testid="session-state"]`); got != "waits for you" {
					t.Errorf("state = %q", got)
				}
				if got := textOf(b, `[data-session="`+session+`"] [data-testid="session-machine"]`); got != "devbox.example.internal" {
					t.Errorf("machine = %q", got)
				}
				if !value(b, "not reloaded", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
					t.Error("the page reloaded")
				}
			})

			t.Run("nothing overflows the screen", func(t *testing.T) {
				got := value(b, "overflow", chromedp.Evaluate[map[string]float64](`(function () {
					var h = document.querySelector("header.top"), wide = 0;
					document.querySelectorAll("main *").forEach(function (el) {
						var r = el.getBoundingClientRect();
						if (r.right > innerWidth + 0.5) wide++;
					});
					return {page: document.documentElement.scrollWidth - innerWidth, header: h.scrollWidth - h.clientWidth, wide: wide,
						link: innerWidth - document.querySelector('[data-testid="agents-link"]').getBoundingClientRect().right};
				})()`))
				if got["page"] > 0 || got["header"] > 0 || got["wide"] > 0 || got["link"] < 0 {
					t.Errorf("at %d px: page %vpx too wide, header %vpx, %v elements past the edge, the Sessions link %vpx from the edge",
						vp.w, got["page"], got["header"], got["wide"], got["link"])
				}
			})

			t.Run("moving on and ending show live", func(t *testing.T) {
				e.sessionEvent(api.SessionEvent{Session: session, Event: models.EventMoved})
				b.run("working", chromedp.WaitVisible(css(`[data-session="`+session+`"][data-state="working"]`)))
				e.sessionEvent(api.SessionEvent{Session: session, Event: models.EventEnded})
				b.run("ended", chromedp.WaitVisible(css(`[data-session="`+session+`"][data-state="ended"]`)))
				if !value(b, "not reloaded", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
					t.Error("the page reloaded")
				}
			})

			t.Run("no console errors", func(t *testing.T) {
				b.flush()
				if errs := b.consoleErrors(); len(errs) > 0 {
					t.Errorf("console: %v", errs)
				}
			})
		})
	}
}
