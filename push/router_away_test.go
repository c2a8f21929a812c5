package push_test

import (
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/push/apnstest"
)

// TestAwayAndQuietGetNoPush: an alert skips the devices of an operator who is
// away and of one in their quiet hours (23:30 in Berlin, inside 22:00–07:00);
// an escalation step alerts the operators it made approvers, and only them.
func TestAwayAndQuietGetNoPush(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		clock := newClock()
		night := time.Date(2026, 1, 15, 22, 30, 0, 0, time.UTC) // 23:30 in Berlin
		rg := newRig(t, dialect, push.Config{AfterFunc: clock.AfterFunc, Now: func() time.Time { return night }}, nil, nil)
		// The router reads the store's clock on its own goroutine.
		var now atomic.Int64
		now.Store(night.UnixNano())
		rg.store.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
		devs := map[string]string{} // device token → operator name
		ops := map[string]models.Principal{}
		for _, o := range []struct{ name, group string }{{"alice", "release"}, {"carol", "release"}, {"dave", "release"}, {"bob", "release-oncall"}} {
			tok, _, err := rg.store.CreateNamedToken(ctx, store.NewToken{Role: models.RoleOperator, Name: o.name, Groups: []string{o.group}})
			if err != nil {
				t.Fatal(err)
			}
			p := tok.Principal()
			ops[o.name] = p
			dev := apnstest.NewToken()
			if _, _, err := rg.store.RegisterDevice(ctx, p, models.Device{Kind: models.DeviceAPNs, Token: dev}); err != nil {
				t.Fatal(err)
			}
			devs[dev] = o.name
		}
		if _, err := rg.store.SetAway(ctx, ops["alice"], true, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := rg.store.SetQuietHours(ctx, ops["carol"], &models.QuietHours{QuietStart: "22:00", QuietEnd: "07:00", QuietTZ: "Europe/Berlin"}); err != nil {
			t.Fatal(err)
		}
		policy := &models.Approvers{Groups: []string{"release"}, Required: 1, Escalate: []models.EscalationStep{
			{After: "10m", To: &models.EscalationTo{Groups: []string{"release-oncall"}}}, {After: "30m", Then: models.ThenHalt}}}
		r, _, err := rg.store.CreateRequest(ctx, rg.agent, models.NewRequest{Kind: models.KindPermission, Title: "SECRET-TITLE",
			Options:   []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
			Approvers: policy}, "")
		if err != nil {
			t.Fatal(err)
		}
		if r.EscalationStep != 0 {
			t.Fatalf("dave is available, yet it escalated: %+v", r.Escalations)
		}

		// queuedFor waits for the push to want, then names every device its
		// message was queued for (all are queued before any is sent).
		queuedFor := func(t *testing.T, want string) []string {
			t.Helper()
			p := testkit.Recv(t, rg.pushes, "a push to "+want)
			noSecrets(t, p.Body)
			if devs[p.Token] != want || p.PushType != "alert" {
				t.Fatalf("a %s push to %s, want an alert to %s", p.PushType, devs[p.Token], want)
			}
			var got []string
			for {
				select {
				case e := <-rg.events:
					if e.Name == "queued" && e.Message.Type == push.TypeAlert {
						got = append(got, devs[e.Device.Token])
					}
					continue
				default:
				}
				break
			}
			sort.Strings(got)
			return got
		}

		t.Run("the alert skips the away and the quiet operator", func(t *testing.T) {
			clock.next(t).fire() // the coalescing window closes
			if got := queuedFor(t, "dave"); len(got) != 1 || got[0] != "dave" {
				t.Fatalf("alert queued for %v, want dave alone (alice away, carol quiet, bob not yet an approver)", got)
			}
		})

		t.Run("escalating alerts the new approvers only", func(t *testing.T) {
			now.Add(int64(10 * time.Minute))
			if n, _, err := rg.store.Escalate(ctx); n != 1 || err != nil {
				t.Fatalf("fired %d: %v", n, err)
			}
			if got := queuedFor(t, "bob"); len(got) != 1 || got[0] != "bob" {
				t.Fatalf("escalation alert queued for %v, want bob alone", got)
			}
		})

		t.Run("bob away too: escalation alerts nobody", func(t *testing.T) {
			if _, err := rg.store.SetAway(ctx, ops["bob"], true, nil); err != nil {
				t.Fatal(err)
			}
			// alice away, bob away, but dave and carol may still decide: no early halt.
			if got, _ := rg.store.GetRequest(ctx, r.ID); !got.Open() {
				t.Fatalf("halted while dave is available: %+v", got)
			}
		})
	})
}
