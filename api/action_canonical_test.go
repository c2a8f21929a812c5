package api_test

import (
	"bytes"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

// The directly written canonical action is byte for byte the general
// canonicaliser's, or every digest a client or an older server computed
// would stop matching.
func TestActionCanonicalMatchesJCS(t *testing.T) {
	rt, empty := "rt_1", ""
	strs := []string{"", "Run git push", `quote " \ backslash`, "tab\tnl\ncr\r\b\f", "\x00\x1f\x7f", "<b>&</b>", "日本 🙂 é", "\u2028\u2029", "\xff bad"}
	for _, s := range strs {
		for _, opts := range [][]api.Option{nil, {}, {{ID: "ok", Label: s, Effect: "allow"}, {ID: s, Label: "Deny", Effect: ""}}} {
			for _, p := range []*string{nil, &empty, &rt, &s} {
				a := api.Action{Kind: "permission", Title: s, Summary: s, Detail: s, Tool: "Bash", Command: s,
					Options: opts, DefaultOption: s, AllowAnswer: s == "", RuntimeID: p, PendingID: p}
				direct, general := api.ActionCanonicalBoth(a)
				if !bytes.Equal(direct, general) {
					t.Errorf("%q:\n direct  %s\n general %s", s, direct, general)
				}
			}
		}
	}
}

func FuzzActionCanonical(f *testing.F) {
	f.Add("permission", "Run git push", "git push origin main", "ok", "Allow", "allow", "rt_1", true)
	f.Add("", "\u2028<", "\x01\"\\", "", "", "", "", false)
	f.Fuzz(func(t *testing.T, kind, title, command, id, label, effect, runtime string, answer bool) {
		a := api.Action{Kind: kind, Title: title, Summary: label, Detail: title + command, Tool: effect, Command: command,
			Options: []api.Option{{ID: id, Label: label, Effect: effect}}, DefaultOption: id, AllowAnswer: answer,
			RuntimeID: &runtime, PendingID: &id}
		direct, general := api.ActionCanonicalBoth(a)
		if !bytes.Equal(direct, general) {
			t.Fatalf("direct %s\ngeneral %s", direct, general)
		}
	})
}
