package rules_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models/rules"
)

// TestRequireEscalate: a require rule's approvers carry escalation steps,
// checked as strictly as a filer's, with the rule's place in the message.
func TestRequireEscalate(t *testing.T) {
	const head = "rules:\n  - name: deploys\n    match: {text: deploy}\n    action: require\n    approvers:\n      groups: [release]\n      escalate:\n"
	rs := mustRules(t, head+"        - {after: 10m, to: {groups: [release-oncall]}}\n        - {after: 30m, then: halt}\n")
	if got := rs.List()[0].Describe(); !strings.Contains(got, "after 10m also release-oncall, after 30m halt") {
		t.Fatalf("the rule reads %q", got)
	}
	for name, steps := range map[string]string{
		"then before the last step": "        - {after: 10m, then: halt}\n        - {after: 30m, to: {groups: [x]}}\n",
		"after going backwards":     "        - {after: 30m, to: {groups: [x]}}\n        - {after: 10m, then: halt}\n",
		"an unknown then":           "        - {after: 10m, then: approve}\n",
		"an unknown member":         "        - {after: 10m, to: {groups: [x]}, notify: everyone}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := rules.ParseRules("rules.yaml", []byte(head+steps)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
