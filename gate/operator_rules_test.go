package gate_test

import (
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/models/rules"
)

// TestOperatorRulesDecideAtFiling: Gatehouse's own rules (the operator's, not
// the gate's) may decide an ask as it is filed; an approval is claimed and
// forwarded at once, a denial handed on.
func TestOperatorRulesDecideAtFiling(t *testing.T) {
	e := newEnv(t)
	rs, err := rules.ParseRules("operator.yaml", []byte(`rules:
  - name: merge-pr-1
    match: {tool: http, command: '^PUT https://127\.0\.0\.1:[0-9]+/repos/acme/widgets/pulls/1/merge'}
    action: approve
  - name: no-merge-pr-2
    match: {tool: http, command: '/pulls/2/merge'}
    action: deny
`))
	if err != nil {
		t.Fatal(err)
	}
	e.gh.store.Rules = rules.NewRuleSet(rs)
	t.Run("approved by a rule", func(t *testing.T) {
		a := e.send(t, "PUT", "/repos/acme/widgets/pulls/1/merge", mergeBody)
		if a.Status != 200 || len(e.up.Hits()) != 1 {
			t.Fatalf("rule-approved merge: %d %s, upstream hits %d", a.Status, a.Body, len(e.up.Hits()))
		}
		if l := e.outcomes(t, "released"); len(l) != 1 {
			t.Fatalf("released log: %v", l)
		}
	})
	t.Run("approved by a rule, sent 8 times at once", func(t *testing.T) {
		// Racing asks share a filing; a rule that approves each filing must
		// still let each of them through, once.
		before := len(e.up.Hits())
		start := make(chan struct{})
		answers := make([]answer, 8)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() { <-start; answers[i] = e.send(t, "PUT", "/repos/acme/widgets/pulls/1/merge", mergeBody) })
		}
		close(start)
		testkit.Wait(t, &wg, "the concurrent calls to finish")
		// The rule decides each filing in its own commit, so no claim sees a
		// grant pending: each loser of a claim files again, and all eight go
		// through. (With three refiles, one in a few hundred runs lost three
		// times in a row and was answered 502.)
		for _, a := range answers {
			if a.Status != 200 {
				t.Errorf("a rule-approved merge: %d %s", a.Status, a.Body)
			}
		}
		if n := len(e.up.Hits()) - before; n != len(answers) {
			t.Fatalf("upstream hits %d, want %d", n, len(answers))
		}
	})
	t.Run("denied by a rule", func(t *testing.T) {
		before := len(e.up.Hits())
		a := e.send(t, "PUT", "/repos/acme/widgets/pulls/2/merge", mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_denied" {
			t.Fatalf("rule-denied merge: %d %s", a.Status, a.Body)
		}
		a = e.send(t, "PUT", "/repos/acme/widgets/pulls/2/merge", mergeBody)
		if m := a.JSON(t); a.Status != 403 || m["error"] != "approval_denied" {
			t.Fatalf("rule-denied merge, again: %d %s", a.Status, a.Body)
		}
		if len(e.up.Hits()) != before {
			t.Fatal("a rule-denied merge reached the upstream")
		}
	})
}
