package web_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehousehq/gatehouse/api"
)

// TestBrowserBatch: on a phone and a laptop, three cards that ask for the
// same command are offered together; the operator sees the list before
// confirming; the agent edits one after the list was shown; confirming
// decides the other two on the versions shown and names the edited one,
// which stays open. Denying a group works the same way, and a cancelled
// confirmation sends nothing.
func TestBrowserBatch(t *testing.T) {
	needChromium(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			e := startCards(t)
			b := newBrowser(t, vp.w, vp.h)
			b.login(e.pageEnv)
			ctx := context.Background()
			unsealed := false
			same := func(command, session string) *api.Request {
				n := hookRequest(command, session, "/home/dev/project")
				n.Sealed = &unsealed
				return e.fileAs(e.agent, n)
			}

			var rs []*api.Request
			for i := range 3 {
				rs = append(rs, same("npm run build", fmt.Sprintf("%d0c0ffee-aaaa-bbbb-cccc-000000000000", i+1)))
			}
			other := e.fileAs(e.agent, hookRequest("git push origin main", "s-9", "/home/dev/project"))
			group := `[data-testid="batch-group"][data-count="3"]`

			t.Run("the same command three times is one group with its two offers", func(t *testing.T) {
				b.run("group", chromedp.WaitVisible(card(other.ID)), chromedp.WaitVisible(css(group)))
				if got := textOf(b, group+` [data-testid="batch-allow"] .label`); got != "Allow all 3 once" {
					t.Errorf("allow offer %q", got)
				}
				if got := textOf(b, group+` [data-testid="batch-allow"] .effect`); got != "each request once; saves nothing" {
					t.Errorf("allow offer says %q", got)
				}
				if got := textOf(b, group+` [data-testid="batch-deny"] .label`); got != "Deny all 3" {
					t.Errorf("deny offer %q", got)
				}
				if n := value(b, "buttons", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="batch-group"] button').length`)); n != 2 {
					t.Errorf("%d offers, want 2 (never one that saves)", n)
				}
				if n := value(b, "groups", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="batch-group"]').length`)); n != 1 {
					t.Errorf("%d groups, want 1 (the other command stands alone)", n)
				}
			})

			t.Run("the list is shown before anything is sent", func(t *testing.T) {
				b.run("ask", chromedp.Click(css(group+` [data-testid="batch-allow"]`)), chromedp.WaitVisible(css(`[data-testid="batch-confirm"]`)))
				items := value(b, "items", chromedp.Evaluate[map[string]string](`Object.fromEntries(Array.from(document.querySelectorAll('[data-testid="batch-item"]')).map(function (li) {
					return [li.getAttribute("data-request-id"), li.getAttribute("data-version") + " | " + Array.from(li.children).map(function (c) { return c.textContent; }).join(" | ")];
				}))`))
				if len(items) != 3 {
					t.Fatalf("items %v", items)
				}
				for i, r := range rs {
					want := fmt.Sprintf("1 | Run: npm run build | agent:claude · session %d0c0ffee · in /home/dev/project | %s", i+1, r.ID)
					if items[r.ID] != want {
						t.Errorf("item %s = %q, want %q", r.ID, items[r.ID], want)
					}
				}
				for _, r := range rs {
					if got, _ := e.operator.Get(ctx, r.ID); got.Status != "open" {
						t.Fatalf("%s decided before confirming", r.ID)
					}
				}
			})

			t.Run("screenshot", func(t *testing.T) {
				dir := t.TempDir()
				if os.Getenv("GATEHOUSE_SCREENSHOT") == "1" {
					dir = filepath.Join("..", "docs")
				}
				shot(t, b, dir, "batch-"+vp.name+".png")
			})

			t.Run("an edit after the list was shown: that one is named and stays open", func(t *testing.T) {
				edited := rs[1]
				if err := e.agent.Do(ctx, http.MethodPatch, "/v1/requests/"+edited.ID, nil, map[string]any{"version": 1, "summary": "and rm -rf ~"}, nil); err != nil {
					t.Fatal(err)
				}
				// The card redraws live at version 2; the confirmation keeps what it showed.
				b.run("live edit", chromedp.WaitVisible(css(`#req-`+edited.ID+`[data-version="2"]`)))
				if v := value(b, "kept", chromedp.Evaluate[string](`document.querySelector('[data-testid="batch-item"][data-request-id="`+edited.ID+`"]').getAttribute("data-version")`)); v != "1" {
					t.Fatalf("the confirmation now lists version %s", v)
				}
				b.run("confirm", chromedp.Click(css(`[data-testid="batch-send"]`)),
					chromedp.WaitVisible(css(`#flash [data-testid="batch-notice"]`)))
				if got := textOf(b, `#flash [data-testid="batch-title"]`); got != "2 of 3 allowed once" {
					t.Errorf("notice title %q", got)
				}
				named := textOf(b, `#flash [data-testid="batch-result"][data-request-id="`+edited.ID+`"][data-status="409"]`)
				if !strings.Contains(named, "left open") || !strings.Contains(named, "version 2") {
					t.Errorf("named %q", named)
				}
				b.run("decided ones leave the list", chromedp.WaitNotPresent(card(rs[0].ID)), chromedp.WaitNotPresent(card(rs[2].ID)),
					chromedp.WaitVisible(card(edited.ID)), chromedp.WaitNotPresent(css(`[data-testid="batch-group"]`)))
				for i, r := range rs {
					got, err := e.operator.Get(ctx, r.ID)
					if err != nil {
						t.Fatal(err)
					}
					if r == edited {
						if got.Status != "open" || got.Version != 2 {
							t.Errorf("the edited one: %s v%d", got.Status, got.Version)
						}
						continue
					}
					if got.Status != "resolved" || *got.Decision != "once" || *got.DecidedVia != "page" {
						t.Errorf("#%d: %s %v", i, got.Status, deref(got.Decision))
					}
				}
			})

			t.Run("a new arrival joins a group live; cancel sends nothing; deny all", func(t *testing.T) {
				d1 := e.fileAs(e.agent, hookRequest("git push origin main", "s-10", "/home/dev/project"))
				pair := `[data-testid="batch-group"][data-count="2"]`
				b.run("group forms live", chromedp.WaitVisible(card(d1.ID)), chromedp.WaitVisible(css(pair)))
				b.run("cancel", chromedp.Click(css(pair+` [data-testid="batch-deny"]`)), chromedp.WaitVisible(css(`[data-testid="batch-cancel"]`)),
					chromedp.Click(css(`[data-testid="batch-cancel"]`)), chromedp.WaitVisible(css(pair+` [data-testid="batch-deny"]`)))
				for _, r := range []*api.Request{other, d1} {
					if got, _ := e.operator.Get(ctx, r.ID); got.Status != "open" {
						t.Fatalf("cancel decided %s", r.ID)
					}
				}
				if vp.w < 600 {
					wide := value(b, "width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
					if wide {
						t.Error("the page scrolls sideways on a phone")
					}
				}
				b.run("deny all", chromedp.Click(css(pair+` [data-testid="batch-deny"]`)), chromedp.WaitVisible(css(`[data-testid="batch-send"]`)),
					chromedp.Click(css(`[data-testid="batch-send"]`)),
					chromedp.WaitVisible(css(`#flash [data-testid="batch-notice"][data-kind="ok"]`)),
					chromedp.WaitNotPresent(card(other.ID)), chromedp.WaitNotPresent(card(d1.ID)))
				if got := textOf(b, `#flash [data-testid="batch-title"]`); got != "2 of 2 denied" {
					t.Errorf("notice title %q", got)
				}
				for _, r := range []*api.Request{other, d1} {
					if got, _ := e.operator.Get(ctx, r.ID); got.Status != "resolved" || *got.Decision != "deny" {
						t.Errorf("%s: %s", r.ID, got.Status)
					}
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
