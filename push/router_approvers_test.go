package push_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
)

// TestAlertsGoToApprovers: a request with a policy alerts only the devices of
// operators who may vote on it; a vote that leaves it open alerts nobody.
func TestAlertsGoToApprovers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		clock := newClock()
		rg := newRig(t, dialect, push.Config{AfterFunc: clock.AfterFunc}, nil, nil)
		alice := models.Principal{ID: "tok_alice", Role: models.RoleOperator, Name: "alice", Groups: []string{"release"}}
		bob := models.Principal{ID: "tok_bob", Role: models.RoleOperator, Name: "bob", Groups: []string{"release"}}
		carol := models.Principal{ID: "tok_carol", Role: models.RoleOperator, Name: "carol", Groups: []string{"sre"}}
		devs := map[string]string{}
		for _, p := range []models.Principal{alice, bob, carol} {
			tok := apnstest.NewToken()
			if _, _, err := rg.store.RegisterDevice(ctx, p, models.Device{Kind: models.DeviceAPNs, Token: tok}); err != nil {
				t.Fatal(err)
			}
			devs[tok] = p.Name
		}
		n := models.NewRequest{Kind: models.KindPermission, Title: "SECRET-TITLE", Tool: "Bash", Command: "SECRET-COMMAND",
			Options:   []models.Option{{ID: "once", Label: "SECRET-LABEL", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
			Approvers: &models.Approvers{Groups: []string{"release"}, Required: 2}}
		r, _, err := rg.store.CreateRequest(ctx, rg.agent, n, "")
		if err != nil {
			t.Fatal(err)
		}
		clock.next(t).fire() // the coalescing window closes

		t.Run("the alert reaches alice and bob, not carol", func(t *testing.T) {
			got := map[string]bool{}
			for range 2 {
				p := testkit.Recv(t, rg.pushes, "an alert")
				noSecrets(t, p.Body)
				if p.PushType != "alert" {
					t.Fatalf("push: %+v", p)
				}
				got[devs[p.Token]] = true
			}
			if !got["alice"] || !got["bob"] {
				t.Fatalf("alerted %v, want alice and bob", got)
			}
		})

		t.Run("alice's vote alerts nobody; the decision clears every device", func(t *testing.T) {
			v, err := rg.store.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: alice.Label(), Via: "api", Voter: &alice})
			if err != nil || !v.Open() {
				t.Fatalf("alice: %+v %v", v, err)
			}
			if _, err := rg.store.Decide(ctx, r.ID, models.Decision{Version: 2, Option: "once", By: bob.Label(), Via: "api", Voter: &bob}); err != nil {
				t.Fatal(err)
			}
			// The router hears changes in order: had the vote planned an alert,
			// its timer would be waiting by the time the clears arrive.
			for range 3 {
				if p := testkit.Recv(t, rg.pushes, "a clear"); p.PushType != "background" {
					t.Fatalf("after the votes, a %s push to %s", p.PushType, devs[p.Token])
				}
			}
			if n := len(clock.timers); n != 0 {
				t.Fatalf("%d timers planned after a vote that left the request open", n)
			}
		})
	})
}
