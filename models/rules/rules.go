package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// Rule actions.
const (
	RuleApprove = "approve"
	RuleDeny    = "deny"
	RuleHold    = "hold"
	RuleRequire = "require" // decides nothing: gives the request the rule's approval policy
)

// Rules is one parsed, compiled rules file. It is immutable once parsed, so
// evaluation needs no lock; a reload builds a new Rules and swaps it in whole.
type Rules struct {
	File     string    // the path it was read from ("" when parsed from bytes)
	Digest   string    // hex SHA-256 of the file, to tell versions apart
	LoadedAt time.Time // when it was parsed
	rules    []rule
}

// Rule is one rule as written, for showing the rules in force.
type Rule struct {
	Name    string
	Line    int // where it starts in the file
	Kind    []string
	Runtime []string
	Tool    []string
	Risk    []string
	// Review is the advisory reviewer's risk levels a require rule routes on;
	// such a rule matches only once a review on the current digest says so.
	Review  []string
	Command string   // regular expression over the request's command; "" matches any
	Text    string   // regular expression over the title or the summary; "" matches any
	GitPush *GitPush // a git push that may update (restrictions) or only updates (approve, hold) these branches
	Action  string   // approve, deny, hold
	Option  string   // the option to pick; "" picks the first with the action's effect
	Window  time.Duration
	Then    string // hold only: approve, deny or an option id
	// Approvers is a require rule's policy.
	Approvers *models.Approvers
}

// rule is a Rule compiled for evaluation.
type rule struct {
	Rule
	command *regexp.Regexp
	text    *regexp.Regexp
	effect  string // the effect the action (or a hold's then) picks; "" when then names an option
	pick    string // the option id to pick, when one is named
}

// Verdict is what the rules say about one request.
type Verdict struct {
	Rule     string        // the first rule that matched; "" when none did
	Line     int           // where that rule is written
	Action   string        // approve, deny or hold; "" when the request goes to the operator
	Option   string        // the option decided (for a hold: at the end of its window)
	Effect   string        // that option's effect as the request offers it now
	Window   time.Duration // hold only
	Deferred string        // why a rule that matched still left the request to the operator
	// Approvers is a require rule's policy: the request goes to the operators,
	// who must meet it.
	Approvers *models.Approvers
}

// Len is the number of rules.
func (rs *Rules) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

// HasHold reports whether any rule holds requests.
func (rs *Rules) HasHold() bool {
	if rs == nil {
		return false
	}
	for i := range rs.rules {
		if rs.rules[i].Action == RuleHold {
			return true
		}
	}
	return false
}

// List returns the rules as written, in order.
func (rs *Rules) List() []Rule {
	if rs == nil {
		return nil
	}
	out := make([]Rule, len(rs.rules))
	for i := range rs.rules {
		out[i] = rs.rules[i].Rule
	}
	return out
}

// Evaluate returns the verdict of the first rule that matches r. A shell
// command is parsed once, when a rule first needs it (see matchesShell);
// otherwise it does not allocate unless a matching rule has to defer (the
// reason is formatted then). A rule never invents scope: it picks only an
// option r offers.
func (rs *Rules) Evaluate(r *models.Request) Verdict {
	if rs == nil {
		return Verdict{}
	}
	var sh *ShellLine
	for i := range rs.rules {
		ru := &rs.rules[i]
		if !ru.matches(r) || !ru.matchesCommand(r, &sh) {
			continue
		}
		v := Verdict{Rule: ru.Name, Line: ru.Line}
		if ru.Action == RuleRequire {
			v.Action, v.Approvers = RuleRequire, ru.Approvers
			return v
		}
		opt, why := ru.choose(r)
		if why != "" {
			v.Deferred = why
			return v
		}
		o, _ := r.Option(opt)
		v.Action, v.Option, v.Effect = ru.Action, opt, o.Effect
		if ru.Action == RuleHold {
			v.Window = ru.Window
		}
		return v
	}
	return Verdict{}
}

// EvaluateReview judges r again once its review has landed: the first rule
// that names review and matches r now, or no verdict. Only require rules may
// name review (ParseRules refuses the rest), so the verdict can give r an
// approval policy and never a decision.
func (rs *Rules) EvaluateReview(r *models.Request) Verdict {
	if rs == nil || r.ReviewRisk() == "" {
		return Verdict{}
	}
	var sh *ShellLine
	for i := range rs.rules {
		ru := &rs.rules[i]
		if len(ru.Review) == 0 || ru.Action != RuleRequire || !ru.matches(r) || !ru.matchesCommand(r, &sh) {
			continue
		}
		return Verdict{Rule: ru.Name, Line: ru.Line, Action: RuleRequire, Approvers: ru.Approvers}
	}
	return Verdict{}
}

// matches tests everything but the command (matchesCommand).
func (ru *rule) matches(r *models.Request) bool {
	if len(ru.Kind) > 0 && !slices.Contains(ru.Kind, r.Kind) {
		return false
	}
	if len(ru.Risk) > 0 && !slices.Contains(ru.Risk, r.Risk) {
		return false
	}
	if len(ru.Tool) > 0 && !slices.Contains(ru.Tool, r.Tool) {
		return false
	}
	if len(ru.Review) > 0 && !slices.Contains(ru.Review, r.ReviewRisk()) {
		return false
	}
	if len(ru.Runtime) > 0 && !ru.matchesRuntime(r) {
		return false
	}
	if ru.text != nil && !ru.text.MatchString(r.Title) && !ru.text.MatchString(r.Summary) {
		return false
	}
	return true
}

// matchesRuntime: `runtime` names the request's runtime_id, or the name of the
// runtime token that filed it (created_by "runtime:NAME").
func (ru *rule) matchesRuntime(r *models.Request) bool {
	if r.RuntimeID != nil && slices.Contains(ru.Runtime, *r.RuntimeID) {
		return true
	}
	name, ok := strings.CutPrefix(r.CreatedBy, models.RoleRuntime+":")
	return ok && slices.Contains(ru.Runtime, name)
}

// choose picks the option the rule decides, or says why it cannot.
func (ru *rule) choose(r *models.Request) (string, string) {
	if ru.pick != "" {
		o, ok := r.Option(ru.pick)
		if !ok {
			return "", "the request does not offer option " + quote(ru.pick)
		}
		if ru.effect != "" && o.Effect != "" && o.Effect != ru.effect {
			return "", "option " + quote(ru.pick) + " has effect " + o.Effect + ", not " + ru.effect
		}
		return o.ID, ""
	}
	for _, o := range r.Options {
		if o.Effect == ru.effect {
			return o.ID, ""
		}
	}
	return "", "the request offers no option with effect " + ru.effect
}

func quote(s string) string { return `"` + s + `"` }

// Describe says in one line what a rule does, for the page and the CLI:
// `tool Bash, command /^git status/ → approve`.
func (ru Rule) Describe() string {
	var parts []string
	add := func(key string, vals []string) {
		if len(vals) > 0 {
			parts = append(parts, key+" "+strings.Join(vals, " or "))
		}
	}
	add("kind", ru.Kind)
	add("runtime", ru.Runtime)
	add("tool", ru.Tool)
	add("risk", ru.Risk)
	add("review", ru.Review)
	if ru.Command != "" {
		parts = append(parts, "command /"+ru.Command+"/")
	}
	if ru.Text != "" {
		parts = append(parts, "text /"+ru.Text+"/")
	}
	if ru.GitPush != nil {
		parts = append(parts, "git push to "+strings.Join(ru.GitPush.Branches, " or "))
	}
	when := "any request"
	if len(parts) > 0 {
		when = strings.Join(parts, ", ")
	}
	then := ru.Action
	if ru.Option != "" {
		then += " with " + ru.Option
	}
	if ru.Action == RuleHold {
		then += " for " + ru.Window.String() + ", then " + ru.Then
	}
	if a := ru.Approvers; a != nil {
		then += fmt.Sprintf(" %d approval(s)", a.Required)
		if len(a.Groups) > 0 {
			then += " from " + strings.Join(a.Groups, " or ")
		}
		if a.Note == models.NoteRequired {
			then += ", note required"
		}
		for _, e := range a.Escalate {
			if e.To != nil {
				then += ", after " + e.After + " also " + strings.Join(e.To.Groups, " or ")
			} else {
				then += ", after " + e.After + " " + e.Then
			}
		}
	}
	return when + " → " + then
}
