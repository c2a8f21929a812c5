package models_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
)

func TestEscalateValidate(t *testing.T) {
	to := func(after string, groups ...string) models.EscalationStep {
		return models.EscalationStep{After: after, To: &models.EscalationTo{Groups: groups}}
	}
	then := func(after, what string) models.EscalationStep { return models.EscalationStep{After: after, Then: what} }
	for _, c := range []struct {
		name  string
		steps []models.EscalationStep
		want  string // "" accepts; else a word of the refusal
	}{
		{"the release chain", []models.EscalationStep{to("10m", "release-oncall"), then("30m", "halt")}, ""},
		{"a default end alone", []models.EscalationStep{then("1h", "default")}, ""},
		{"after not increasing", []models.EscalationStep{to("30m", "a"), to("10m", "b")}, "must come after"},
		{"after repeated", []models.EscalationStep{to("10m", "a"), then("10m", "halt")}, "must come after"},
		{"then before the last step", []models.EscalationStep{then("10m", "halt"), to("30m", "b")}, "last step only"},
		{"both to and then", []models.EscalationStep{{After: "10m", To: &models.EscalationTo{Groups: []string{"a"}}, Then: "halt"}}, "both"},
		{"neither", []models.EscalationStep{{After: "10m"}}, "needs to"},
		{"an unknown then", []models.EscalationStep{then("10m", "approve")}, "default or halt"},
		{"no groups", []models.EscalationStep{to("10m")}, "at least one"},
		{"a bad group name", []models.EscalationStep{to("10m", "on call")}, "must match"},
		{"a repeated group", []models.EscalationStep{to("10m", "a", "a")}, "repeated"},
		{"not a duration", []models.EscalationStep{to("ten minutes", "a")}, "duration"},
		{"a negative after", []models.EscalationStep{to("-1m", "a")}, "duration"},
		{"past a week", []models.EscalationStep{to("169h", "a")}, "duration"},
		{"too many steps", []models.EscalationStep{to("1m", "a"), to("2m", "b"), to("3m", "c"), to("4m", "d"), then("5m", "halt")}, "at most"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := models.Approvers{Groups: []string{"release"}, Required: 1, Escalate: c.steps}
			err := a.Validate("approvers")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want a refusal saying %q, got %v", c.want, err)
			}
		})
	}
}

func TestEscalationWidensApprovers(t *testing.T) {
	bob := models.Principal{Role: models.RoleOperator, Name: "bob", Groups: []string{"release-oncall"}}
	r := &models.Request{Status: models.StatusOpen, Approvers: &models.Approvers{Groups: []string{"release"}, Required: 1,
		Escalate: []models.EscalationStep{{After: "10m", To: &models.EscalationTo{Groups: []string{"release-oncall"}}}}}}
	if r.MayVote(bob) == nil {
		t.Fatal("bob votes before the escalation")
	}
	r.EscalationStep, r.Escalations = 1, []models.Escalated{{Step: 1, Groups: []string{"release-oncall"}, Why: models.EscalatedDue}}
	if err := r.MayVote(bob); err != nil {
		t.Fatalf("bob after the escalation: %v", err)
	}
	if g := r.Approvers.Groups; len(g) != 1 {
		t.Fatalf("the policy itself changed: %v", g)
	}
}

func TestHaltOption(t *testing.T) {
	opts := []models.Option{{ID: "once", Effect: "allow"}, {ID: "no", Effect: "deny"}, {ID: "never", Effect: "deny"}}
	if o, ok := models.HaltOption(opts, "never"); !ok || o != "never" {
		t.Fatalf("a denying default: %q", o)
	}
	if o, ok := models.HaltOption(opts, "once"); !ok || o != "no" {
		t.Fatalf("an allowing default: %q", o)
	}
	if _, ok := models.HaltOption(opts[:1], ""); ok {
		t.Fatal("halted with no deny option")
	}
}
