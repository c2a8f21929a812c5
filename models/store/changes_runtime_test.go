package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

func woken(w <-chan struct{}) bool {
	select {
	case <-w:
		return true
	default:
		return false
	}
}

func TestChangesRuntimeKey(t *testing.T) {
	c := store.NewChanges()
	wa, stopA := c.Watch(models.RuntimeKey("rt_a"))
	defer stopA()
	wb, stopB := c.Watch(models.RuntimeKey("rt_b"))
	defer stopB()

	for _, ch := range []models.Change{
		{RequestID: "req_1", Version: 1, Status: models.StatusOpen, Action: "create", RuntimeID: "rt_a"},
		{RequestID: "req_1", Version: 2, Status: models.StatusResolved, Action: models.ActionActuation, RuntimeID: "rt_a"},
		{RequestID: "req_2", Version: 2, Status: models.StatusResolved, Action: "decide"}, // names no runtime
	} {
		c.Announce(ch)
		if woken(wa) || woken(wb) {
			t.Fatalf("%+v woke a runtime feed: it adds nothing to one", ch)
		}
	}
	c.Announce(models.Change{RequestID: "req_3", Version: 2, Status: models.StatusResolved, Action: "decide", RuntimeID: "rt_a"})
	if !woken(wa) {
		t.Fatal("a decision on runtime a's request did not wake its feed")
	}
	if woken(wb) {
		t.Fatal("a decision on runtime a's request woke runtime b's feed")
	}
	c.Resync()
	if !woken(wb) {
		t.Fatal("a resync did not wake runtime b's feed")
	}
}

func TestStoreAnnouncesRuntime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, changes := storetest.Store(t, dialect)
		p := runtimeToken(t, s, "r")
		rt := register(t, s, p, "laptop", "")
		w, stop := changes.Watch(models.RuntimeKey(rt.ID))
		defer stop()
		sub := changes.Subscribe(8)
		defer sub.Close()
		r, _, err := s.CreateRequest(ctx, p, models.NewRequest{Title: "git push", RuntimeID: &rt.ID,
			Options: []models.Option{{ID: "once", Label: "Allow once"}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if ch := nextChange(t, sub); ch.RuntimeID != rt.ID || ch.Action != "create" {
			t.Fatalf("create announced %+v, want runtime %s", ch, rt.ID)
		}
		if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
			t.Fatal(err)
		}
		if ch := nextChange(t, sub); ch.RuntimeID != rt.ID || ch.Action != "decide" {
			t.Fatalf("decide announced %+v, want runtime %s", ch, rt.ID)
		}
		if !woken(w) {
			t.Fatal("the decision did not wake the runtime's feed")
		}
	})
}
