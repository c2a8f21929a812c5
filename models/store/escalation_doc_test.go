package store_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// docEscalationRules is the example rules file of docs/escalation.md.
func docEscalationRules(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/escalation.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "<!-- escalation-example")
	if !ok {
		t.Fatal("docs/escalation.md has no escalation-example marker")
	}
	_, after, _ = strings.Cut(after, "```yaml\n")
	src, _, _ := strings.Cut(after, "```\n")
	return src
}

// TestEscalationDocExample walks the worked example's timeline and its
// variations with the example's own rules file.
func TestEscalationDocExample(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		s, _ := storetest.Store(t, dialect)
		s.Rules = rules.NewRuleSet(mustRules(t, docEscalationRules(t)))
		t0 := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
		now := t0
		s.Now = func() time.Time { return now }
		alice, dave, bob := voter(t, s, "alice", "release"), voter(t, s, "dave", "release"), voter(t, s, "bob", "release-oncall")
		filer := agent(t, s, "agent")
		deploy := func() *models.Request {
			t.Helper()
			return file(t, s, filer, models.NewRequest{Kind: models.KindPermission, Tool: "Bash", Command: "make deploy"})
		}

		t.Run("the timeline", func(t *testing.T) {
			now = t0
			r := deploy()
			if r.MayVote(bob) == nil || r.MayVote(alice) != nil {
				t.Fatalf("at 14:00: %+v", r.Approvers)
			}
			now = t0.Add(10 * time.Minute)
			s.Escalate(ctx)
			r, _ = s.GetRequest(ctx, r.ID)
			if r.MayVote(bob) != nil || r.EscalationStep != 1 {
				t.Fatalf("at 14:10: %+v", r)
			}
			now = t0.Add(30 * time.Minute)
			s.Escalate(ctx)
			r, _ = s.GetRequest(ctx, r.ID)
			if r.Status != models.StatusResolved || *r.Decision != "deny" || *r.Note != models.HaltNote || *r.DecidedVia != "escalation" {
				t.Fatalf("at 14:30: %+v", r)
			}
		})

		t.Run("alice approves at 14:05: nothing fires", func(t *testing.T) {
			now = t0
			r := deploy()
			now = t0.Add(5 * time.Minute)
			if _, err := voteAs(s, alice, r, 1, "once", ""); err != nil {
				t.Fatal(err)
			}
			now = t0.Add(time.Hour)
			s.Escalate(ctx)
			if r, _ = s.GetRequest(ctx, r.ID); *r.Decision != "once" || r.EscalationStep != 0 {
				t.Fatalf("%+v", r)
			}
		})

		t.Run("alice and dave away: bob at once, the halt still at 14:30", func(t *testing.T) {
			now = t0
			s.SetAway(ctx, alice, true, nil)
			s.SetAway(ctx, dave, true, nil)
			r := deploy()
			if r.EscalationStep != 1 || r.Escalations[0].Why != models.EscalatedAway || !r.Open() {
				t.Fatalf("%+v", r)
			}
			now = t0.Add(29 * time.Minute)
			s.Escalate(ctx)
			if r, _ = s.GetRequest(ctx, r.ID); !r.Open() {
				t.Fatalf("halted before 14:30 while bob is there: %+v", r)
			}
			t.Run("bob away too: the agent is told to stop at once", func(t *testing.T) {
				now = t0
				s.SetAway(ctx, bob, true, nil)
				r := deploy()
				if r.Status != models.StatusResolved || *r.Note != models.HaltNote {
					t.Fatalf("%+v", r)
				}
			})
		})
	})
}
