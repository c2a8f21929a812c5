package chat

import (
	"fmt"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// view is one request as a chat message shows it, built once and drawn by
// each surface. In generic mode it holds no title, command, cwd or options.
type view struct {
	ID      string
	Version int
	Generic bool
	Open    bool

	Headline string   // the title, or "1 request needs you"
	Kind     string   // permission, question, …
	Risk     string   // "" when none
	Who      []string // "filed by agent:x", "runtime ci (build-1)", "session 0123abcd", "cwd /src"
	Command  string   // monospace
	Detail   string
	Expires  time.Time
	Options  []button
	Answer   bool   // a free-text answer is taken
	Votes    string // "1 of 2 approvals — operator:alice: Allow once"
	Outcome  string // how it ended, "" while open
	Link     string // the request on the page
}

// button is one option: its label and, in words, what choosing it does
// (Effect); Is is the effect itself (allow, deny, "").
type button struct {
	ID, Label, Effect, Saves, Is string
}

// maxDetail bounds the detail shown in a message; the page has the rest.
const maxDetail = 1500

// newView is what a message in a destination of mode detail shows of r.
func newView(r *models.Request, detail, baseURL, runtimeName string) view {
	v := view{ID: r.ID, Version: r.Version, Open: r.Open(), Kind: r.Kind, Expires: r.ExpiresAt,
		Link: strings.TrimSuffix(baseURL, "/") + "/requests/" + r.ID, Outcome: outcome(r), Votes: votesText(r)}
	if detail != DetailFull {
		// The outcome and votes in words the filer did not write: an option
		// label is the filer's text, and generic shows none of it.
		v.Outcome, v.Votes = genericOutcome(r), genericVotes(r)
		v.Generic, v.Headline = true, "1 request needs you"
		if !v.Open {
			v.Headline = "A request was settled"
		}
		return v
	}
	v.Headline, v.Risk, v.Command, v.Answer = r.Title, r.Risk, r.Command, r.AllowAnswer
	v.Detail = r.Detail
	if v.Detail == "" {
		v.Detail = r.Summary
	}
	if len(v.Detail) > maxDetail {
		v.Detail = v.Detail[:maxDetail] + "…"
	}
	v.Who = append(v.Who, "filed by "+r.CreatedBy)
	if runtimeName != "" {
		v.Who = append(v.Who, "runtime "+runtimeName)
	}
	if s := r.SourceRef["session"]; s != "" {
		v.Who = append(v.Who, "session "+s[:min(8, len(s))])
	}
	if cwd := r.SourceRef["cwd"]; cwd != "" {
		v.Who = append(v.Who, "cwd "+cwd)
	}
	if risk := r.ReviewRisk(); risk != "" {
		// The advisory reviewer's one sentence: full detail only, as it
		// speaks of the command.
		v.Who = append(v.Who, "reviewer (advice): "+risk+" risk — "+r.Review.Rationale)
	}
	for _, o := range r.Options {
		v.Options = append(v.Options, button{ID: o.ID, Label: o.Label, Effect: effectWords(r, o), Saves: o.Saves, Is: o.Effect})
	}
	return v
}

// effectWords says what an option does, as the page's buttons do, so an
// allow can never pass for a deny.
func effectWords(r *models.Request, o models.Option) string {
	thing := "it"
	if r.Command != "" {
		thing = "this command"
	}
	switch o.Effect {
	case models.EffectDeny:
		return "blocks " + thing
	case models.EffectAllow:
		switch {
		case o.Saves != "":
			return "lets " + thing + " run and saves " + o.Saves
		case o.Remember != nil:
			// A chat click decides as a plain allow: remembering is the
			// page's, where the stored rule is shown first.
			return "lets " + thing + " run once (remember it on the page)"
		case o.ID == "once" || strings.Contains(strings.ToLower(o.Label), "once"):
			return "lets " + thing + " run once"
		}
		return "lets " + thing + " go ahead"
	}
	return "sends this answer"
}

// outcome says how a closed request ended and by whom, "" while open. The
// label is the filer's text, so an allow or a deny also says so in Gatehouse's
// own word: an allow labelled "Deny" cannot read as a deny.
func outcome(r *models.Request) string {
	what := "Resolved"
	switch {
	case r.Decision != nil:
		what = *r.Decision
		if o, ok := r.Option(*r.Decision); ok {
			what = o.Label
		}
	case r.Answer != nil:
		what = "Answered"
	}
	return closedText(r, r.CreatedBy, what, verbOf(r))
}

// genericOutcome is outcome without the filer's words: no label, no filer.
func genericOutcome(r *models.Request) string {
	verb := verbOf(r)
	switch {
	case verb != "":
		verb = strings.ToUpper(verb[:1]) + verb[1:]
	case r.Answer != nil:
		verb = "Answered"
	default:
		verb = "Decided"
	}
	return closedText(r, "the filer", "", verb)
}

// verbOf is what the decision did in Gatehouse's words (the page's):
// "approved", "denied", "" for an option with no effect or an answer.
func verbOf(r *models.Request) string {
	switch r.DecisionEffect() {
	case models.EffectAllow:
		return "approved"
	case models.EffectDeny:
		return "denied"
	}
	return ""
}

// closedText is "<what><verb> by <who> via <via> at <time>", or the other
// ways a request closes; filer names who withdrew it.
func closedText(r *models.Request, filer, what, verb string) string {
	at := ""
	if r.ResolvedAt != nil {
		at = " at " + r.ResolvedAt.UTC().Format("15:04 UTC")
	}
	switch r.Status {
	case models.StatusOpen:
		return ""
	case models.StatusExpired:
		return "Expired with no decision" + at
	case models.StatusDismissed:
		return "Dismissed" + at
	case models.StatusCancelled:
		return "Withdrawn by " + filer + at
	}
	tail := ""
	via := deref(r.DecidedVia)
	switch {
	case strings.HasPrefix(via, "rule:"):
		tail = "by rule " + strings.TrimPrefix(via, "rule:")
	case via == models.ViaExpiry:
		tail = "as the default, on expiry"
	case r.DecidedBy != nil:
		tail = "by " + *r.DecidedBy + " via " + via
	}
	how := strings.TrimSpace(verb + " " + tail)
	switch {
	case what == "":
		return how + at
	case how == "":
		return what + at
	}
	return what + " — " + how + at
}

// votesText is "1 of 2 approvals — operator:alice: Allow once (allow)", ""
// without a policy; votes cast before an edit do not count and are not shown.
// Each vote says its effect beside the filer's label.
func votesText(r *models.Request) string {
	return votesWith(r, func(o models.Option) string {
		if o.Effect == "" {
			return o.Label
		}
		return o.Label + " (" + o.Effect + ")"
	})
}

// genericVotes is votesText with each vote's effect for its label.
func genericVotes(r *models.Request) string {
	return votesWith(r, func(o models.Option) string {
		if o.Effect == "" {
			return "a choice"
		}
		return o.Effect
	})
}

func votesWith(r *models.Request, name func(models.Option) string) string {
	a := r.Approvers
	if a == nil || !r.Open() {
		return ""
	}
	digest := r.ActionDigest()
	lead, most := map[string]int{}, 0
	var parts []string
	for _, v := range r.Votes {
		if v.Digest != digest {
			continue
		}
		lead[v.Decision]++
		most = max(most, lead[v.Decision])
		label := v.Decision
		if o, ok := r.Option(v.Decision); ok {
			label = name(o)
		}
		parts = append(parts, v.By+": "+label)
	}
	noun := "approvals"
	if a.Required == 1 {
		noun = "approval"
	}
	s := fmt.Sprintf("%d of %d %s", most, a.Required, noun)
	if len(parts) > 0 {
		s += " — " + strings.Join(parts, ", ")
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
