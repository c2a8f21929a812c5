package web_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestFeedCarriesDigest: a pulling runtime gets decided_digest (to check
// against what it filed) and decided_via (a person, a rule or an expiry).
func TestFeedCarriesDigest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		f := newFeedRig(t, dialect)
		op, rtc := f.as(t, models.RoleOperator), f.as(t, models.RoleRuntime)
		rt, err := rtc.RegisterRuntime(bg, api.RuntimeRegistration{Name: "puller", Machine: "m"})
		if err != nil {
			t.Fatal(err)
		}
		r := fileFor(t, rtc, rt.ID)
		if _, err := op.Decide(bg, r.ID, 1, "once", ""); err != nil {
			t.Fatal(err)
		}
		p, err := rtc.Decisions(bg, rt.ID, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		onlyDecision(t, p, r.ID)
		if d := p.Decisions[0]; d.DecidedDigest != r.ActionDigest || d.DecidedVia != models.ViaAPI {
			t.Fatalf("feed entry %+v, want decided_digest %s and decided_via api", d, r.ActionDigest)
		}
	})
}
