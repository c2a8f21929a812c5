package models

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// ECodeMisleading refuses a filing or an edit whose option id or label reads
// as the opposite of the option's effect ("Deny" on an allow).
const ECodeMisleading = "misleading_option"

// denyWords and allowWords are the words that make an option's id or label
// read as a refusal or as a permission, compared with whole words of the
// text, lower-cased, with apostrophes dropped ("don't" is "dont"). The first
// of them in the text is what it reads as: "Yes, and don't ask again for
// commands that start with `git commit --no-verify`" reads as a permission,
// whatever command it quotes. Qualifiers ("once", "always") read as a
// permission only in a text that has no other such word: "reject_once" and
// "Always reject" are refusals, "Once" alone is not.
var (
	denyWords = wordSet("deny denied denies reject rejected rejects no nope decline declined declines " +
		"block blocked blocks cancel cancelled canceled cancels stop stops refuse refused refuses " +
		"abort disallow disallowed forbid forbidden")
	allowWords = wordSet("allow allowed allows approve approved approves accept accepted accepts " +
		"yes ok okay grant granted grants proceed")
	qualifiers = wordSet("once always")
	// negators turn the effect word right after them around: "Don't allow"
	// reads as a refusal, "not deny" as a permission.
	negators = wordSet("dont not never no")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// words splits text as a reader sees it: compatibility forms folded
// (fullwidth "Ｄｅｎｙ" is "deny"), invisible format characters dropped (a
// zero-width space inside "De​ny" does not split it), apostrophes dropped,
// and every other non-letter a break. Ids split on their underscores.
func words(text string) []string {
	text = norm.NFKC.String(text)
	var b strings.Builder
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Cf, r), r == '\'', r == '’', r == 'ʼ':
			continue
		case unicode.IsLetter(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

// readsAs is the effect text reads as (the first effect word's, a negator
// before it turning it around), "" when it says neither.
func readsAs(text string) string {
	ws := words(text)
	qualified := false
	for i, w := range ws {
		if negators[w] && i+1 < len(ws) {
			switch next := ws[i+1]; {
			case allowWords[next] || qualifiers[next]:
				return EffectDeny // "dont allow", "never once"
			case denyWords[next]:
				return EffectAllow // "not deny"
			}
		}
		switch {
		case denyWords[w]:
			return EffectDeny
		case allowWords[w]:
			return EffectAllow
		}
		qualified = qualified || qualifiers[w]
	}
	if qualified {
		return EffectAllow
	}
	return ""
}

// opposite is the effect that is not e, "" for an option with no effect.
func opposite(e string) string {
	switch e {
	case EffectAllow:
		return EffectDeny
	case EffectDeny:
		return EffectAllow
	}
	return ""
}

// CheckMisleading refuses options of which an id or a label reads as the
// opposite of the option's effect: an allow with the id "deny" or the label
// "Reject", a deny labelled "Yes". Every surface says an option's effect in
// Gatehouse's own words, but an operator who reads the filer's first should
// not be lied to there either. Options with no effect (plain answers) pass,
// and so does text whose first effect word is its own, whatever it quotes
// later ("Always allow commands starting `docker stop`", "reject_once").
// A lie in words the lists do not hold (another language) still passes:
// the surfaces' effect words are the defence there.
func CheckMisleading(options []Option) error {
	for i, o := range options {
		bad := opposite(o.Effect)
		if bad == "" {
			continue
		}
		for _, f := range []struct{ name, text string }{{"id", o.ID}, {"label", o.Label}} {
			if readsAs(f.text) == bad {
				return Errorf(ECodeMisleading, "options[%d].%s %q reads as %s, but the option's effect is %s: name an option for what it does",
					i, f.name, f.text, bad, o.Effect)
			}
		}
	}
	return nil
}
