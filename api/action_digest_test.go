package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
)

// worked is the example record of DESIGN.md's action_digest: a Claude Code
// Bash permission with no summary, detail, runtime or pending grant.
var worked = api.Action{
	Kind: "permission", Title: "Run: git push origin main", Tool: "Bash", Command: "git push origin main",
	Options:       []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
	DefaultOption: "deny",
}

// workedCanonical is worked's RFC 8785 form written out by hand: keys sorted,
// no whitespace, absent values null, options in their order.
const workedCanonical = `{"allow_answer":false,"command":"git push origin main","default_option":"deny","detail":null,` +
	`"kind":"permission","options":[{"effect":"allow","id":"once","label":"Allow once"},{"effect":"deny","id":"deny","label":"Deny"}],` +
	`"pending_id":null,"runtime_id":null,"summary":null,"title":"Run: git push origin main","tool":"Bash"}`

func ExampleActionDigest() {
	fmt.Println(api.ActionDigest(worked))
	// Output: 78fa69a07594c19b248ece0f3d34f12af1633cdb8a92d0103e3d6cfca760c5f5
}

func TestActionDigest(t *testing.T) {
	t.Run("the worked example, computed a second way", func(t *testing.T) {
		sum := sha256.Sum256([]byte(workedCanonical))
		if got, want := api.ActionDigest(worked), hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("ActionDigest = %s, the hand-written canonical form hashes to %s", got, want)
		}
	})
	t.Run("every covered field moves it", func(t *testing.T) {
		rt, pend := "rt_1", "pend_1"
		seen := map[string]string{api.ActionDigest(worked): "the example"}
		for name, change := range map[string]func(a *api.Action){
			"kind":    func(a *api.Action) { a.Kind = "approval" },
			"title":   func(a *api.Action) { a.Title = "Status update: green" },
			"summary": func(a *api.Action) { a.Summary = "s" },
			"detail":  func(a *api.Action) { a.Detail = "d" },
			"tool":    func(a *api.Action) { a.Tool = "Read" },
			"command": func(a *api.Action) { a.Command = "git push --force" },
			"a label": func(a *api.Action) {
				a.Options = []api.Option{{ID: "once", Label: "Deny", Effect: "allow"}, a.Options[1]}
			},
			"an effect": func(a *api.Action) {
				a.Options = []api.Option{{ID: "once", Label: "Allow once", Effect: "deny"}, a.Options[1]}
			},
			"option order":   func(a *api.Action) { a.Options = []api.Option{a.Options[1], a.Options[0]} },
			"default_option": func(a *api.Action) { a.DefaultOption = "once" },
			"allow_answer":   func(a *api.Action) { a.AllowAnswer = true },
			"runtime_id":     func(a *api.Action) { a.RuntimeID = &rt },
			"pending_id":     func(a *api.Action) { a.PendingID = &pend },
		} {
			a := worked
			change(&a)
			d := api.ActionDigest(a)
			if other, dup := seen[d]; dup {
				t.Fatalf("changing %s gives the digest of %s", name, other)
			}
			seen[d] = name
		}
	})
	t.Run("the record and the filing agree", func(t *testing.T) {
		def := "deny"
		r := api.Request{Kind: worked.Kind, Title: worked.Title, Tool: worked.Tool, Command: worked.Command, Options: worked.Options, DefaultOption: &def}
		n := api.NewRequest{Kind: worked.Kind, Title: worked.Title, Tool: worked.Tool, Command: worked.Command, Options: worked.Options, DefaultOption: def}
		if api.ActionDigest(r.Action()) != api.ActionDigest(worked) || api.ActionDigest(n.Action()) != api.ActionDigest(worked) {
			t.Fatal("Request.Action and NewRequest.Action disagree with the example")
		}
	})
}
