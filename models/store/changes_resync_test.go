package store_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

func TestChangesResync(t *testing.T) {
	c := store.NewChanges()
	w1, stop1 := c.Watch("req_a")
	w2, stop2 := c.Watch("req_b")
	sub := c.Subscribe(4)
	defer sub.Close()

	c.Resync()

	for name, w := range map[string]<-chan struct{}{"req_a": w1, "req_b": w2} {
		select {
		case <-w:
		default:
			t.Errorf("watcher of %s not woken", name)
		}
	}
	stop1() // stopping after a resync is harmless
	stop2()
	if ch := testkit.Recv(t, sub.C, "sub.C"); ch.Action != models.ActionResync || ch.RequestID != "" {
		t.Fatalf("subscriber got %+v, want a resync", ch)
	}
	// A watch taken after the resync waits for the next change.
	w3, stop3 := c.Watch("req_a")
	defer stop3()
	select {
	case <-w3:
		t.Fatal("a new watcher woke without a change")
	default:
	}
	c.Announce(models.Change{RequestID: "req_a", Version: 2, Action: "decide"})
	select {
	case <-w3:
	default:
		t.Fatal("the new watcher missed the change")
	}
}
