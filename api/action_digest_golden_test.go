package api_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
)

// full is a record with every kind of member set: what a stored decision's
// decided_digest was computed over.
func full() *api.Request {
	at := time.Date(2026, 12, 3, 10, 0, 0, 123456000, time.UTC)
	r := worked.AsFiled(nil)
	r.ID, r.Status, r.Version, r.CreatedAt, r.UpdatedAt, r.ExpiresAt = "req_1", "open", 3, at, at, at.Add(time.Hour)
	risk, note := "high", "two of release"
	r.Risk = &risk
	r.Detail = "line one\nline \"two\" <tag> & é \u2028 \U0001F600"
	r.Approvals = &api.Approvals{Groups: []string{"release", "ops"}, Required: 2, Note: &note,
		Escalate: []api.EscalationStep{{After: "10m", To: &api.EscalationTo{Groups: []string{"oncall"}}}, {After: "30m", Then: "halt"}},
		Votes:    []api.Vote{{By: "operator:a", Decision: "once", At: at}}}
	return r
}

// TestActionDigestGolden pins the digest of fixed records: decisions stored
// by an earlier build are bound to these values, so the way the digest is
// computed may change only if its bytes do not.
func TestActionDigestGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		r    *api.Request
		want string
	}{
		{"a hook's filing", worked.AsFiled(nil), "1f2a78153fec28b5b8a1430bf6dffefaa683b43ccb3478e73ae5c0ac2664d511"},
		{"every kind of member", full(), "ff508023c07e29c3249fce29a362b430a481267c8f7f34c6b18c28af51b1936c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := api.ActionDigest(c.r); got != c.want {
				t.Errorf("digest %s, want %s", got, c.want)
			}
		})
	}
}

func BenchmarkActionDigest(b *testing.B) {
	r := full()
	b.ReportAllocs()
	for b.Loop() {
		api.ActionDigest(r)
	}
}
