package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
	"github.com/gatehousehq/gatehouse/internal/yamlfile"
	"github.com/gatehousehq/gatehouse/models"
)

// RuleError is one problem in a rules file, at the line and column it starts.
type RuleError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *RuleError) Error() string {
	f := e.File
	if f == "" {
		f = "rules"
	}
	return fmt.Sprintf("%s:%d:%d: %s", f, e.Line, e.Column, e.Msg)
}

// MaxRules caps a rules file; evaluation is a linear scan.
const MaxRules = 1000

var ruleNamePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// The file as written. Lists of strings are `any` so that both `kind: permission`
// and `kind: [permission, approval]` are accepted.
type rulesFile struct {
	Rules []ruleSpec `yaml:"rules"`
}

type ruleSpec struct {
	Name   string    `yaml:"name"`
	Match  matchSpec `yaml:"match"`
	Action string    `yaml:"action"`
	Option string    `yaml:"option"`
	Window string    `yaml:"window"`
	Then   string    `yaml:"then"`
	// Approvers is a require rule's policy: {groups, required, note}.
	Approvers *approversSpec `yaml:"approvers"`
}

type approversSpec struct {
	Groups   any    `yaml:"groups"`
	Required int    `yaml:"required"`
	Note     string `yaml:"note"`
	// Escalate: [{after: 10m, to: {groups: [oncall]}}, {after: 30m, then: halt}].
	Escalate []models.EscalationStep `yaml:"escalate"`
}

type matchSpec struct {
	Kind    any          `yaml:"kind"`
	Runtime any          `yaml:"runtime"`
	Tool    any          `yaml:"tool"`
	Risk    any          `yaml:"risk"`
	Review  any          `yaml:"review"`
	Command string       `yaml:"command"`
	Text    string       `yaml:"text"`
	GitPush *gitPushSpec `yaml:"git_push"`
}

// LoadRules reads and compiles a rules file. Errors are *RuleError (joined when
// there are several) or the error reading the file.
func LoadRules(path string) (*Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	return ParseRules(path, data)
}

// ParseRules compiles a rules file named name. An empty file, or `rules: []`,
// gives rules that match nothing.
func ParseRules(name string, data []byte) (*Rules, error) {
	sum := sha256.Sum256(data)
	rs := &Rules{File: name, Digest: hex.EncodeToString(sum[:]), LoadedAt: time.Now().UTC()}
	var spec rulesFile
	f, err := yamlfile.Decode(data, &spec)
	if err != nil {
		return nil, ruleError(name, err)
	}
	c := compiler{name: name, file: f}
	if len(spec.Rules) > MaxRules {
		c.fail("$.rules", "at most %d rules", MaxRules)
	}
	seen := map[string]int{}
	for i, s := range spec.Rules {
		ru := c.compile(i, s)
		if ru.Name != "" {
			if first, ok := seen[ru.Name]; ok {
				c.fail(fmt.Sprintf("$.rules[%d].name", i), "rule name %q is already used by the rule at line %d", ru.Name, first)
			} else {
				seen[ru.Name] = ru.Line
			}
		}
		rs.rules = append(rs.rules, ru)
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return rs, nil
}

type compiler struct {
	name string
	file *yamlfile.File
	errs []error
}

func (c *compiler) fail(path, format string, args ...any) {
	line, col := c.file.Pos(path)
	c.errs = append(c.errs, &RuleError{File: c.name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

func (c *compiler) compile(i int, s ruleSpec) rule {
	at := fmt.Sprintf("$.rules[%d]", i)
	line, _ := c.file.Pos(at)
	ru := rule{Rule: Rule{Name: s.Name, Line: line, Command: s.Match.Command, Text: s.Match.Text,
		Action: s.Action, Option: s.Option, Then: s.Then}}
	switch {
	case s.Name == "":
		c.fail(at, "rule %d has no name", i+1)
	case !ruleNamePattern.MatchString(s.Name):
		c.fail(at+".name", "rule name %q must match %s", s.Name, ruleNamePattern)
	}
	m := at + ".match"
	ru.Kind = c.list(m+".kind", s.Match.Kind, models.Kinds, "a kind of request")
	ru.Risk = c.list(m+".risk", s.Match.Risk, models.Risks, "low, medium or high")
	ru.Tool = c.list(m+".tool", s.Match.Tool, nil, "")
	ru.Review = c.list(m+".review", s.Match.Review, models.ReviewRisks, "low, medium, high or critical")
	if s.Match.Review != nil && s.Action != RuleRequire && s.Action != "" {
		// The reviewer advises; nothing approves, holds or denies on its word.
		c.fail(at+".action", "rule %q names review, so its action must be require (an approval policy, which may escalate): the reviewer never decides, and %s would decide on its word", s.Name, s.Action)
	}
	ru.Runtime = c.list(m+".runtime", s.Match.Runtime, nil, "")
	ru.command = c.regexp(m+".command", s.Match.Command)
	ru.text = c.regexp(m+".text", s.Match.Text)
	ru.GitPush = c.gitPush(m+".git_push", s.Match.GitPush)
	if s.Option != "" {
		if models.OptionIDPattern.MatchString(s.Option) {
			ru.pick = s.Option
		} else {
			c.fail(at+".option", "option %q is not an option id (%s)", s.Option, models.OptionIDPattern)
		}
	}
	switch s.Action {
	case RuleApprove, RuleDeny:
		ru.effect = effectOf(s.Action)
		if s.Window != "" || s.Then != "" {
			c.fail(at+".action", "window and then belong to action hold, not %s", s.Action)
		}
	case RuleHold:
		c.hold(at, s, &ru)
	case RuleRequire:
		c.require(at, s, &ru)
	case "":
		c.fail(at, "rule %q has no action: approve, deny, hold or require", s.Name)
	default:
		c.fail(at+".action", "action %q is not one of approve, deny, hold, require", s.Action)
	}
	if s.Approvers != nil && s.Action != RuleRequire {
		c.fail(at+".approvers", "approvers belong to action require, not %s", s.Action)
	}
	return ru
}

// require compiles a require rule: it decides nothing, it gives the request
// an approval policy.
func (c *compiler) require(at string, s ruleSpec, ru *rule) {
	if s.Option != "" || s.Window != "" || s.Then != "" {
		c.fail(at+".action", "option, window and then do not belong to action require")
	}
	if s.Approvers == nil {
		c.fail(at, "rule %q requires but has no approvers (e.g. approvers: {groups: [release], required: 2})", s.Name)
		return
	}
	a := &models.Approvers{Groups: c.list(at+".approvers.groups", s.Approvers.Groups, nil, ""), Required: s.Approvers.Required, Note: s.Approvers.Note, Escalate: s.Approvers.Escalate}
	if a.Required == 0 {
		a.Required = 1
	}
	if err := a.Validate("approvers"); err != nil {
		c.fail(at+".approvers", "%s", models.ErrorDetail(err))
		return
	}
	ru.Approvers = a
}

func (c *compiler) hold(at string, s ruleSpec, ru *rule) {
	if s.Window == "" {
		c.fail(at, "rule %q holds but has no window (e.g. window: 2m)", s.Name)
	} else if d, err := time.ParseDuration(s.Window); err != nil || d <= 0 {
		c.fail(at+".window", "window %q is not a positive duration like 90s or 2m", s.Window)
	} else {
		ru.Window = d
	}
	switch {
	case s.Then == "":
		c.fail(at, "rule %q holds but has no then: approve, deny or an option id", s.Name)
	case s.Then == RuleApprove || s.Then == RuleDeny:
		ru.effect = effectOf(s.Then)
	case s.Option != "":
		c.fail(at+".then", "then names option %q and option names %q: name one", s.Then, s.Option)
	case models.OptionIDPattern.MatchString(s.Then):
		ru.pick = s.Then
	default:
		c.fail(at+".then", "then %q is not approve, deny or an option id", s.Then)
	}
}

func effectOf(action string) string {
	if action == RuleApprove {
		return models.EffectAllow
	}
	return models.EffectDeny
}

// list reads a string or a list of strings; allowed, when set, is the set of
// valid values.
func (c *compiler) list(path string, v any, allowed map[string]bool, what string) []string {
	var out []string
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		out = []string{x}
	case []any:
		if len(x) == 0 {
			c.fail(path, "an empty list matches nothing: leave the key out to match any")
			return nil
		}
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				c.fail(path, "expected a string or a list of strings")
				return nil
			}
			out = append(out, s)
		}
	default:
		c.fail(path, "expected a string or a list of strings")
		return nil
	}
	for _, s := range out {
		if s == "" || (allowed != nil && !allowed[s]) {
			if allowed == nil {
				c.fail(path, "an empty value matches nothing")
			} else {
				c.fail(path, "%q is not %s", s, what)
			}
			return nil
		}
	}
	return out
}

func (c *compiler) regexp(path, expr string) *regexp.Regexp {
	if expr == "" {
		return nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		c.fail(path, "bad regular expression: %v", err)
		return nil
	}
	return re
}

// ruleError names the file in a yamlfile error.
func ruleError(name string, err error) error {
	var ye *yamlfile.Error
	if errors.As(err, &ye) {
		return &RuleError{File: name, Line: ye.Line, Column: ye.Column, Msg: ye.Msg}
	}
	return &RuleError{File: name, Line: 1, Column: 1, Msg: err.Error()}
}
