package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// loginAs logs the browser in with an operator token's secret.
func (b *tab) loginAs(e *pageEnv, secret string) {
	b.t.Helper()
	b.run("log in",
		chromedp.Navigate(e.url+"/login"),
		chromedp.WaitVisible(css(`input[name="token"]`)),
		chromedp.SendKeys(css(`input[name="token"]`), secret),
		chromedp.Click(css(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="filters"]`)),
		chromedp.WaitReady(css(`body.live`)),
	)
}

// waitText waits until the element sel shows text containing want.
func (b *tab) waitText(step, sel, want string) {
	b.t.Helper()
	expr := fmt.Sprintf(`(function(){ const el = document.querySelector(%q); return !!el && el.textContent.includes(%q); })()`, sel, want)
	if !value(b, step, chromedp.Poll[bool](expr)) {
		b.t.Fatalf("%s: %q never showed %q", step, sel, want)
	}
}

func (b *tab) disabled(sel string) bool {
	b.t.Helper()
	return value(b, "read "+sel, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).disabled`, sel)))
}

// TestBrowserTwoPersonApproval: alice votes on her page, bob sees "1 of 2"
// live on his and decides; carol, outside the group, sees why she cannot.
func TestBrowserTwoPersonApproval(t *testing.T) {
	needChromium(t)
	e := startPage(t, "sqlite")
	mk := func(name string, groups ...string) string {
		_, secret, err := e.store.CreateNamedToken(context.Background(), store.NewToken{Role: models.RoleOperator, Name: name, Groups: groups})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	alice, bob, carol := newBrowser(t, 1100, 900), newBrowser(t, 390, 844), newBrowser(t, 1100, 900)
	alice.loginAs(e, mk("alice", "release"))
	bob.loginAs(e, mk("bob", "release"))
	carol.loginAs(e, mk("carol", "sre"))

	t.Run("each page says who is logged in", func(t *testing.T) {
		for name, b := range map[string]*tab{"alice": alice, "bob": bob, "carol": carol} {
			b.waitText("who", `[data-testid="operator"]`, name)
		}
	})

	r := e.file("Deploy to production", func(n *api.NewRequest) {
		n.Command = "make deploy"
		n.Approvers = &api.Approvers{Groups: []string{"release"}, Required: 2}
	})
	votes := fmt.Sprintf(`#req-%s [data-testid="card-approvals"]`, r.ID)
	once := fmt.Sprintf(`#req-%s button[data-option="once"]`, r.ID)

	t.Run("the card shows the policy live on every page", func(t *testing.T) {
		for _, b := range []*tab{alice, bob, carol} {
			b.run("card appears", chromedp.WaitVisible(option(r.ID, "once")))
			b.waitText("votes line", votes, "0 of 2 approvals")
		}
	})

	t.Run("carol, outside release, sees disabled buttons and why", func(t *testing.T) {
		if !carol.disabled(once) {
			t.Fatal("carol's buttons are enabled")
		}
		carol.waitText("reason", fmt.Sprintf(`#req-%s [data-testid="card-novote"]`, r.ID), "carol is not in [release]")
		// A policy narrows who may approve, never who may refuse.
		if carol.disabled(fmt.Sprintf(`#req-%s button[data-effect="deny"]`, r.ID)) {
			t.Fatal("carol may not deny")
		}
		carol.waitText("she may deny", fmt.Sprintf(`#req-%s [data-testid="card-novote"]`, r.ID), "You may still deny")
	})

	t.Run("alice votes and bob sees 1 of 2 live", func(t *testing.T) {
		alice.run("vote", chromedp.Click(option(r.ID, "once")))
		bob.waitText("bob sees the vote", votes, "1 of 2 approvals — alice: Allow once")
		alice.waitText("alice sees her vote", votes, "1 of 2 approvals — alice: Allow once")
		alice.waitText("alice is told she voted", fmt.Sprintf(`#req-%s [data-testid="card-novote"]`, r.ID), "already voted")
		if !alice.disabled(once) {
			t.Fatal("alice may click again")
		}
		if bob.disabled(once) {
			t.Fatal("bob's buttons are disabled")
		}
		got, err := e.agent.Get(context.Background(), r.ID)
		if err != nil || got.Status != "open" || got.Approvals == nil || len(got.Approvals.Votes) != 1 {
			t.Fatalf("after alice's vote: %+v %v", got, err)
		}
	})

	t.Run("bob decides, and the request resolves on every page", func(t *testing.T) {
		bob.run("vote", chromedp.Click(option(r.ID, "once")))
		for _, b := range []*tab{alice, bob, carol} {
			b.run("resolved", chromedp.WaitNotPresent(card(r.ID)))
		}
		got, err := e.agent.Get(context.Background(), r.ID)
		if err != nil || got.Status != "resolved" || *got.Decision != "once" || len(got.Approvals.Votes) != 2 || !strings.HasSuffix(*got.DecidedBy, "bob") {
			t.Fatalf("after bob's vote: %+v %v", got, err)
		}
	})
	for name, b := range map[string]*tab{"alice": alice, "bob": bob, "carol": carol} {
		if errs := b.consoleErrors(); len(errs) > 0 {
			t.Errorf("%s's console: %v", name, errs)
		}
	}
}
