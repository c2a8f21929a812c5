package views

import "strings"

// EscalatedText says what one fired escalation step did: "Escalated to
// release-oncall at 14:05 UTC", or how the last step ended the request.
func EscalatedText(e Escalation) string {
	at := e.At.UTC().Format("15:04") + " UTC"
	var t string
	switch {
	case e.Then == "":
		t = "Escalated to " + strings.Join(e.Groups, ", ") + " at " + at
	case e.Option == "":
		t = "Escalation could not halt at " + at + ": no option denies, so it stays open until it expires"
	case e.Halted:
		t = "Halted at " + at + ": nobody decided in time (\"" + e.Option + "\"); the agent was told to stop and wait for a person"
	default:
		t = "Escalation applied the default \"" + e.Option + "\" at " + at
	}
	if e.Away {
		t += " (everyone who could approve was away)"
	}
	return t
}

// NextEscalationText says what the escalation does next unless someone decides.
func NextEscalationText(e Escalation) string {
	at := e.At.UTC().Format("15:04") + " UTC"
	switch e.Then {
	case "":
		return "Escalates to " + strings.Join(e.Groups, ", ") + " at " + at + " unless decided"
	case "default":
		return "Applies its default at " + at + " unless decided"
	}
	return "Halts at " + at + " unless decided"
}
