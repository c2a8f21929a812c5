package models

import (
	"fmt"
	"strconv"
	"strings"
)

// ECodeAmbiguousChoice refuses a typed effect word that more than one
// option answers to ("allow" with "Allow once" and "Allow for this
// session"): the operator chooses by number instead.
const ECodeAmbiguousChoice = "ambiguous_choice"

// Choice is what an operator was shown and did to choose an option; set one
// of its fields. Option ids are the filer's: they are matched only with an id
// that a control Gatehouse drew carries, never with a word a person wrote.
type Choice struct {
	// Button is the option id carried by a control Gatehouse drew (a page,
	// Slack or batch button, a modal's radio, the API's decision field, the
	// decision a bridge reads back). It is bound to the version the control
	// showed, which the decide checks.
	Button string
	// Position is the option's place as the message listed it, from 1 (a
	// Telegram button carries it).
	Position int
	// Typed is what a person wrote: a position ("2") or an effect word
	// (allow, approve, yes, ok… deny, reject, no…).
	Typed string
}

// SelectOption is the one way any surface turns what an operator did into
// an option of opts, the options of the version the operator was shown. A
// typed word selects by effect, never by id: with options {id "deny", effect
// allow} and {id "no", effect deny}, "deny" selects the second. A word that
// no single plain option answers to is refused with a hint that lists the
// options by number, effect and label (ECodeNotOffered, or
// ECodeAmbiguousChoice when several do); a button that names no option is
// ECodeNotOffered; an empty choice ECodeInvalid.
func SelectOption(opts []Option, c Choice) (Option, error) {
	switch {
	case c.Button != "":
		for _, o := range opts {
			if o.ID == c.Button {
				return o, nil
			}
		}
		return Option{}, Errorf(ECodeNotOffered, "%q is not an option this request offers", c.Button)
	case c.Position != 0:
		return byPosition(opts, c.Position)
	case strings.TrimSpace(c.Typed) != "":
		return byTyped(opts, c.Typed)
	}
	return Option{}, Errorf(ECodeInvalid, "decision is required: one of the offered options")
}

func byPosition(opts []Option, n int) (Option, error) {
	if n < 1 || n > len(opts) {
		return Option{}, Errorf(ECodeNotOffered, "there is no option %d; %s", n, ChoiceHint(opts))
	}
	return opts[n-1], nil
}

// readTyped reads a typed choice as a number or one effect word.
func readTyped(typed string) (n int, number bool, effect string) {
	t := strings.Trim(strings.TrimSpace(typed), ".,:;!?")
	if n, err := strconv.Atoi(t); err == nil {
		return n, true, ""
	}
	if ws := words(t); len(ws) == 1 && len(ws[0]) == len(t) {
		switch {
		case allowWords[ws[0]]:
			return 0, false, EffectAllow
		case denyWords[ws[0]]:
			return 0, false, EffectDeny
		}
	}
	return 0, false, ""
}

// byTyped selects by a typed number, else by one effect word.
func byTyped(opts []Option, typed string) (Option, error) {
	n, number, effect := readTyped(typed)
	if number {
		return byPosition(opts, n)
	}
	if effect == "" {
		return Option{}, Errorf(ECodeNotOffered, "%q is not a number or an effect word; %s", typed, ChoiceHint(opts))
	}
	var match []Option
	for _, o := range opts {
		if o.Effect == effect {
			match = append(match, o)
		}
	}
	switch {
	case len(match) == 0:
		return Option{}, Errorf(ECodeNotOffered, "no option here has the effect %s; %s", effect, ChoiceHint(opts))
	case len(match) > 1:
		return Option{}, Errorf(ECodeAmbiguousChoice, "%d options have the effect %s; %s", len(match), effect, ChoiceHint(opts))
	case !match[0].Plain():
		// Its button or its number, next to what it saves, choose it.
		return Option{}, Errorf(ECodeNotOffered, "the option that has the effect %s also saves or remembers a rule; %s", effect, ChoiceHint(opts))
	}
	return match[0], nil
}

// ChoiceHint says how to choose among opts in writing: each option's number,
// its effect in Gatehouse's word and its label, never its id.
func ChoiceHint(opts []Option) string {
	parts := make([]string, len(opts))
	for i, o := range opts {
		what := o.Effect
		if what == "" {
			what = "an answer"
		}
		if !o.Plain() {
			what += ", and saves a rule"
		}
		parts[i] = fmt.Sprintf("%d = %s (%q)", i+1, what, o.Label)
	}
	how := "a number"
	for _, e := range []string{EffectAllow, EffectDeny} {
		if hasEffect(opts, e) {
			how += " or " + e
		}
	}
	return "choose with " + how + ": " + strings.Join(parts, ", ")
}

func hasEffect(opts []Option, effect string) bool {
	for _, o := range opts {
		if o.Effect == effect {
			return true
		}
	}
	return false
}
