package push_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/push"
)

// With no device registered a filing costs the router no reads and no claim
// (a write in every filing's path); the first device brings alerts back.
func TestNoDevicesNoClaims(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		clock := newClock()
		rg := newRig(t, dialect, push.Config{AfterFunc: clock.AfterFunc}, nil, nil)
		claims := func() int64 {
			var n int64
			if err := rg.store.DB.Table("push_claims").Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}

		t.Run("no device: nothing claimed", func(t *testing.T) {
			rg.file(t, models.KindPermission)
			clock.next(t).fire()
			rg.wait(t, "no-devices")
			if n := claims(); n != 0 {
				t.Errorf("%d push claims made with no device to push to", n)
			}
		})

		t.Run("a device registered: the next filing alerts it", func(t *testing.T) {
			tok := rg.device(t)
			r := rg.file(t, models.KindPermission)
			clock.next(t).fire()
			p := testkit.Recv(t, rg.pushes, "a push")
			if p.Token != tok || p.CollapseID != r.ID {
				t.Errorf("push: %+v", p)
			}
		})
	})
}
