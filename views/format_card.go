package views

import (
	"strings"
	"time"
)

// Stamp is a time as the server writes it: UTC, with its zone said. The
// page's script shows it in the operator's own zone, with this on hover.
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

// ShortSession is the first 8 characters of a session id: enough to tell two
// sessions apart at a glance.
func ShortSession(s string) string {
	if r := []rune(s); len(r) > 8 {
		return string(r[:8])
	}
	return s
}

// expiryLead says what happens when the time runs out: the default option's
// label ("Deny on expiry"), or that nothing is decided.
func expiryLead(c Card) string {
	if c.DefaultOption != "" {
		return label(c, c.DefaultOption) + " on expiry"
	}
	return "Expires undecided"
}

// closedVerb introduces when a closed request ended.
func closedVerb(c Card) string {
	switch c.Status {
	case "expired":
		return "Expired"
	case "dismissed":
		return "Dismissed"
	case "cancelled":
		return "Withdrawn"
	}
	return "Decided"
}

// optionsInOrder is the order the buttons are drawn in: as filed, except that
// on a high-risk request the options that deny come first, so the first
// button a hurried thumb meets is the safe one.
func optionsInOrder(c Card) []Option {
	if c.Risk != "high" {
		return c.Options
	}
	out := make([]Option, 0, len(c.Options))
	for _, o := range c.Options {
		if o.Effect == "deny" {
			out = append(out, o)
		}
	}
	for _, o := range c.Options {
		if o.Effect != "deny" {
			out = append(out, o)
		}
	}
	return out
}

// effectText says in words what a button does, so an allow can never pass for
// a deny whatever its label says.
func effectText(c Card, o Option) string {
	thing := "it"
	if c.Command != "" {
		thing = "this command"
	}
	switch o.Effect {
	case "deny":
		return "blocks " + thing
	case "allow":
		switch {
		case o.Saves != "":
			return "lets " + thing + " run and saves"
		case o.ID == "once" || strings.Contains(strings.ToLower(o.Label), "once"):
			return "lets " + thing + " run once"
		}
		return "lets " + thing + " go ahead"
	}
	return "sends this answer"
}
