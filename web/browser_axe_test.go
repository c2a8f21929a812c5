package web_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
)

// axeSource is axe-core, vendored from npm (testdata/axe/VERSION says which):
// the test injects it into each page, so it needs no network.
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// axeViolation is one rule axe-core found broken, with the elements that break it.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	URL    string `json:"url"`
	Nodes  []struct {
		Target  string `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

func (v axeViolation) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s (%s): %s\n    %s", v.ID, v.Impact, v.Help, v.URL)
	for _, n := range v.Nodes {
		fmt.Fprintf(&s, "\n    - %s\n      %s\n      %s", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n      "))
	}
	return s.String()
}

// runAxe is axe-core's default run (WCAG 2.x A and AA, and its best
// practices) over the whole document as it stands.
const runAxe = `axe.run(document, {resultTypes: ["violations"]}).then(function (r) {
	return r.violations.map(function (v) {
		return {id: v.id, impact: v.impact || "", help: v.help, url: v.helpUrl, nodes: v.nodes.map(function (n) {
			return {target: String(n.target), html: n.html.slice(0, 200), summary: n.failureSummary || ""};
		})};
	});
})`

// scheme makes the page prefer a light or dark colour scheme, as the
// operator's system would.
func (b *tab) scheme(s string) {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: s}},
	}); err != nil {
		b.t.Fatalf("colour scheme %s: %v", s, err)
	}
}

// audit runs axe-core on the page as it is, in light and in dark, and fails
// the test with every violation, readably.
func (b *tab) audit(axe, name string) {
	b.t.Helper()
	value(b, "inject axe-core", chromedp.Evaluate[bool](`if (!window.axe) {`+axe+`
}; true`))
	for _, s := range []string{"light", "dark"} {
		b.scheme(s)
		ctx, cancel := context.WithTimeout(b.ctx, 2*stepTimeout) // axe on a full inbox takes a few seconds
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			b.t.Fatalf("%s (%s): axe: %v", name, s, err)
		}
		for _, v := range got {
			b.t.Errorf("%s (%s): %s", name, s, v)
		}
	}
	b.scheme("light")
}

// TestBrowserAxe runs axe-core on every page, at 1280 px and 390 px, light
// and dark: the login form (and its error), the inbox empty and full (cards
// of every kind and risk, held, resolved, a batch and its confirmation, the
// remembered allows, the shortcut dialogs), each filter, a request page open
// and closed, the system page (runtimes, devices, rules, away), the pages a
// form without JavaScript lands on (a batch's result, a stale decision) and
// the 404s. None may have a violation.
func TestBrowserAxe(t *testing.T) {
	needChromium(t)
	axe := axeSource(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ctx := context.Background()
			e := startPage(t, "sqlite", func(st *store.Store) {
				rs, err := rules.ParseRules("rules.yaml", []byte(systemRules))
				if err != nil {
					t.Fatal(err)
				}
				st.Rules = rules.NewRuleSet(rs)
			})
			b := newBrowser(t, vp.w, vp.h)

			t.Run("axe-core finds a violation planted in the page", func(t *testing.T) {
				b.t = t
				b.run("a page", chromedp.Navigate(e.url+"/login"), chromedp.WaitVisible(css(`input[name="token"]`)))
				value(b, "inject axe-core", chromedp.Evaluate[bool](`if (!window.axe) {`+axe+`
}; true`))
				got := value(b, "axe on an image with no text", chromedp.Evaluate[[]axeViolation](`(function () {
					var img = document.createElement("img");
					img.src = "data:,"; img.id = "planted";
					document.querySelector("main").appendChild(img);
					return `+runAxe+`;
				})()`, chromedp.EvalAwaitPromise))
				if len(got) != 1 || got[0].ID != "image-alt" || len(got[0].Nodes) != 1 || got[0].Nodes[0].Target != "#planted" {
					t.Fatalf("axe-core found %v, want image-alt on #planted", got)
				}
			})

			t.Run("login", func(t *testing.T) {
				b.t = t
				b.run("login page", chromedp.Navigate(e.url+"/login"), chromedp.WaitVisible(css(`input[name="token"]`)))
				b.audit(axe, "login")
				b.run("a wrong token",
					chromedp.SendKeys(css(`input[name="token"]`), "not-a-token"),
					chromedp.Click(css(`[data-testid="login-submit"]`)),
					chromedp.WaitVisible(css(`[data-testid="login-error"]`)))
				b.audit(axe, "login error")
			})
			b.t = t
			b.login(e)
			b.run("the page is live", chromedp.WaitVisible(css(`[data-testid="connection"][data-state="live"]`)))

			t.Run("empty inbox", func(t *testing.T) {
				b.t = t
				b.run("empty", chromedp.WaitVisible(css(`[data-testid="empty-state"]`)))
				b.audit(axe, "empty inbox")
			})
			b.t = t

			// Every kind and risk, a held one (the rules hold high risk), two
			// alike (a batch), a remembered allow and closed requests.
			_, rtSecret, err := e.store.CreateToken(ctx, models.RoleRuntime, "claude-host")
			if err != nil {
				t.Fatal(err)
			}
			rt := client.New(e.url, rtSecret)
			reg, err := rt.RegisterRuntime(ctx, api.RuntimeRegistration{Name: "claude-host", Machine: "dev-laptop.local", CallbackURL: "http://127.0.0.1:1/hook"})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.operator.Do(ctx, http.MethodPost, "/v1/devices", nil, map[string]string{"token": strings.Repeat("0a1b", 15) + "c0ffee42", "name": "phone"}, nil); err != nil {
				t.Fatal(err)
			}
			rem := e.shell("npm test", "s-rem")
			if status, body := e.call("POST", "/v1/requests/"+rem.ID+"/decide", e.opToken,
				map[string]any{"version": rem.Version, "decision": "once", "remember": map[string]any{"scope": "session", "for": "1h"}}); status != 200 {
				t.Fatalf("remember: %d %s", status, body)
			}
			denied := e.file("Drop the staging database", func(n *api.NewRequest) { n.Risk, n.Command = "medium", "psql -c 'drop database staging'" })
			if _, err := e.operator.Decide(ctx, denied.ID, denied.Version, "deny", "not today"); err != nil {
				t.Fatal(err)
			}
			for _, risk := range []string{"low", "medium"} {
				e.file("Run the "+risk+" risk suite", func(n *api.NewRequest) { n.Risk, n.Kind = risk, "approval" })
			}
			held := e.file("Force-push main", func(n *api.NewRequest) { n.Command = "git push --force origin main" })
			e.file("Which branch?", func(n *api.NewRequest) {
				n.Kind, n.Risk, n.AllowAnswer, n.Tool, n.Command = "question", "", true, "", ""
				n.Options = []api.Option{{ID: "main", Label: "main"}, {ID: "release", Label: "release/2.4"}}
			})
			for _, kind := range []string{"waiting", "review"} { // informational: dismissed, not decided
				e.file("A "+kind+" item", func(n *api.NewRequest) { n.Kind, n.Risk, n.Tool, n.Command, n.Options = kind, "", "", "", nil })
			}
			for _, kind := range []string{"failure", "setup"} {
				e.file("A "+kind+" item", func(n *api.NewRequest) {
					n.Kind, n.Risk, n.Tool, n.Command = kind, "", "", ""
					n.Options = []api.Option{{ID: "retry", Label: "Retry"}, {ID: "stop", Label: "Stop", Effect: "deny"}}
				})
			}
			// Agent sessions: waiting with and without a way to reply, working,
			// blocked on a permission, ended.
			e.sessionWaits("3f9a51c2-reply", "Pushed the branch. Shall I open the pull request?", true)
			e.sessionWaits("8d20c7aa-noreply", "All tests pass.", false)
			e.sessionEvent(api.SessionEvent{Session: "b7e1d0f4-working", Event: models.EventStarted, Cwd: "/srv/app"})
			e.sessionEvent(api.SessionEvent{Session: "c4a8e2b9-ended", Event: models.EventEnded})
			hook := hookRequest("git push origin main", "cabcfecf-230c-4cc4-9bfb-dc5c563ea4e3", "/home/dev/project")
			hook.RuntimeID = &reg.ID
			ce := &cardEnv{pageEnv: e}
			twin := ce.fileAs(rt, hook)
			ce.fileAs(rt, hook)
			rm := hookRequest("rm -rf ./build", "s-9", "/srv/app")
			rm.Risk = "high"
			ce.fileAs(rt, rm)

			t.Run("inbox with cards", func(t *testing.T) {
				b.t = t
				b.run("inbox", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(card(held.ID)),
					chromedp.WaitVisible(css(`[data-testid="remembered-grant"]`)),
					chromedp.WaitVisible(css(`[data-testid="batch-group"]`)),
					chromedp.WaitReady(css(`[data-testid="connection"][data-state="live"]`)))
				b.audit(axe, "inbox")
				b.run("batch confirmation", chromedp.Click(css(`[data-testid="batch-group"] [data-testid="batch-allow"]`)),
					chromedp.WaitVisible(css(`[data-testid="batch-confirm"]`)))
				b.audit(axe, "inbox, a batch to confirm")
				b.run("cancel", chromedp.Click(css(`[data-testid="batch-cancel"]`)), chromedp.WaitNotPresent(css(`[data-testid="batch-confirm"]`)))
				b.run("open a card's note and Remember…", chromedp.Click(css(`#req-`+twin.ID+` details summary`)),
					chromedp.Click(css(`#req-`+twin.ID+` [data-testid="remember-open"]`)), chromedp.WaitVisible(css(`#req-`+twin.ID+` [data-testid="remember-rule"]`)))
				b.audit(axe, "inbox, a card's controls open")
			})

			t.Run("shortcut dialogs", func(t *testing.T) {
				b.t = t
				b.run("focus the held card", chromedp.Focus(card(held.ID)))
				b.keys("?", "?")
				b.run("help", chromedp.WaitVisible(css(`dialog#shortcuts[open]`)))
				b.audit(axe, "shortcuts help")
				b.keys("escape", kb.Escape)
				b.run("help closed", chromedp.WaitNotPresent(css(`dialog#shortcuts[open]`)), chromedp.Focus(card(held.ID)))
				b.keys("a", "a")
				b.run("confirm", chromedp.WaitVisible(css(`dialog#confirm-key[open]`)))
				b.audit(axe, "high-risk confirmation")
				b.keys("escape", kb.Escape)
				b.run("confirm closed", chromedp.WaitNotPresent(css(`dialog#confirm-key[open]`)))
			})

			for _, f := range []string{"resolved", "all"} {
				t.Run("inbox "+f, func(t *testing.T) {
					b.t = t
					b.run(f, chromedp.Navigate(e.url+"/?status="+f), chromedp.WaitVisible(card(denied.ID)),
						chromedp.WaitReady(css(`[data-testid="connection"][data-state="live"]`)))
					b.audit(axe, "inbox "+f)
				})
			}

			for name, id := range map[string]string{"open": held.ID, "resolved": denied.ID, "with a runtime": twin.ID} {
				t.Run("request page "+name, func(t *testing.T) {
					b.t = t
					b.run("request", chromedp.Navigate(e.url+"/requests/"+id), chromedp.WaitVisible(css(`[data-testid="audit"]`)),
						chromedp.WaitReady(css(`[data-testid="connection"][data-state="live"]`)))
					b.audit(axe, "request page "+name)
				})
			}

			t.Run("system", func(t *testing.T) {
				b.t = t
				b.run("system", chromedp.Navigate(e.url+"/system"), chromedp.WaitVisible(css(`[data-testid="runtime-row"]`)),
					chromedp.WaitVisible(css(`[data-testid="device-row"]`)), chromedp.WaitVisible(css(`[data-testid="rule-row"]`)))
				b.audit(axe, "system")
				if err := e.operator.Do(ctx, http.MethodPut, "/v1/me/quiet-hours", nil, api.QuietHours{Start: "22:00", End: "07:00", TZ: "Europe/Paris"}, nil); err != nil {
					t.Fatal(err)
				}
				b.run("away", chromedp.Click(css(`[data-testid="away-toggle"]`)), chromedp.WaitVisible(css(`[data-testid="quiet-hours"]`)))
				b.audit(axe, "system, away")
			})

			t.Run("sessions", func(t *testing.T) {
				b.t = t
				b.run("sessions", chromedp.Navigate(e.url+"/agents"), chromedp.WaitVisible(css(`[data-testid="session"][data-state="waiting"]`)),
					chromedp.WaitVisible(css(`[data-testid="session"][data-state="ended"]`)),
					chromedp.WaitReady(css(`[data-testid="connection"][data-state="live"]`)))
				b.audit(axe, "sessions")
			})

			t.Run("not found", func(t *testing.T) {
				b.t = t
				for _, path := range []string{"/requests/req_nope", "/nope"} {
					b.run(path, chromedp.Navigate(e.url+path), chromedp.WaitVisible(css(`[data-testid="notice"]`)))
					b.audit(axe, "404 "+path)
				}
			})

			t.Run("pages a form lands on without JavaScript", func(t *testing.T) {
				b.t = t
				// form.submit() posts as a browser without JavaScript would:
				// htmx never sees it.
				b.run("inbox", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(css(`[data-testid="batch-group"]`)))
				value(b, "a stale decision", chromedp.Evaluate[bool](`(function () {
					var f = document.querySelector('#req-`+twin.ID+` [data-testid="decide-form"]');
					f.querySelector('input[name="version"]').value = "99";
					// A card the socket drew leaves the CSRF token to htmx's header.
					var csrf = document.createElement("input");
					csrf.type = "hidden"; csrf.name = "csrf";
					csrf.value = JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRF-Token"];
					f.appendChild(csrf);
					var decision = document.createElement("input"); // form.submit() sends no button
					decision.type = "hidden"; decision.name = "decision"; decision.value = "once";
					f.appendChild(decision);
					f.submit();
					return true;
				})()`))
				b.run("decided elsewhere", chromedp.WaitVisible(css(`[data-testid="notice"][data-kind="conflict"]`)))
				b.audit(axe, "a stale decision")
				b.run("inbox", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(css(`[data-testid="batch-group"]`)),
					chromedp.Click(css(`[data-testid="batch-group"] [data-testid="batch-deny"]`)), chromedp.WaitVisible(css(`[data-testid="batch-confirm"]`)))
				value(b, "a batch", chromedp.Evaluate[bool](`document.querySelector('[data-testid="batch-confirm"]').submit(); true`))
				b.run("batch result", chromedp.WaitVisible(css(`[data-testid="batch-notice"]`)))
				b.audit(axe, "a batch's result")
			})

			b.t = t
			b.flush()
			for _, err := range b.consoleErrors() {
				// The wrong token (401) and the 404s are asked for.
				if strings.Contains(err, "[network]") && (strings.Contains(err, "401") || strings.Contains(err, "404")) {
					continue
				}
				t.Errorf("console error: %v", err)
			}
		})
	}
}
