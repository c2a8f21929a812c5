package gate

import (
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
	"github.com/gatehousehq/gatehouse/internal/yamlfile"
)

// The actions a gate rule can take.
const (
	Allow = "allow" // forward
	Deny  = "deny"  // answer 403 gate_denied
	Ask   = "ask"   // file a pending grant and hand the agent Gatehouse's 403
)

// Unmatched is the policy name of a request no rule matched; it is asked.
const Unmatched = "unmatched"

// RuleError is one problem in a rules file, at the line and column it starts.
type RuleError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Rule is one compiled rule.
type Rule struct {
	Name   string // the policy named in a grant; "rule-N" when the file names none
	Line   int
	Method string // upper case; "" matches every method
	Path   *regexp.Regexp
	Action string
}

// Rules is a compiled rules file: the first rule that matches decides.
type Rules struct {
	rules []Rule
}

// Decide returns the action for a request and the name of the rule that chose
// it; unmatched requests are asked.
func (rs *Rules) Decide(method, path string) (action, name string) {
	for _, r := range rs.rules {
		if (r.Method == "" || r.Method == method) && (r.Path == nil || r.Path.MatchString(path)) {
			return r.Action, r.Name
		}
	}
	return Ask, Unmatched
}

// Len is the number of rules.
func (rs *Rules) Len() int { return len(rs.rules) }

type rulesFile struct {
	Rules []ruleSpec `yaml:"rules"`
}

type ruleSpec struct {
	Name   string    `yaml:"name"`
	Match  matchSpec `yaml:"match"`
	Action string    `yaml:"action"`
}

type matchSpec struct {
	Method string `yaml:"method"`
	Path   string `yaml:"path"`
}

// Names are shown to the agent and the operator as the grant's policy, so they
// are identifiers, not prose (Gatehouse's policy pattern, shorter).
var namePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,63}$`)

var methodPattern = lazyregexp.New(`^[A-Z]+$`)

// LoadRules reads and compiles a rules file.
func LoadRules(path string) (*Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRules(path, data)
}

// ParseRules compiles a rules file named name. Errors are *RuleError (joined
// when there are several): a broken file is refused whole, never half-applied.
func ParseRules(name string, data []byte) (*Rules, error) {
	rs := &Rules{}
	var spec rulesFile
	f, err := yamlfile.Decode(data, &spec)
	if err != nil {
		return nil, ruleError(name, err)
	}
	c := compiler{name: name, file: f}
	seen := map[string]bool{}
	for i, s := range spec.Rules {
		r := c.compile(i, s)
		if seen[r.Name] {
			c.fail(fmt.Sprintf("$.rules[%d].name", i), "rule name %q is used twice", r.Name)
		}
		seen[r.Name] = true
		rs.rules = append(rs.rules, r)
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

func (c *compiler) compile(i int, s ruleSpec) Rule {
	at := fmt.Sprintf("$.rules[%d]", i)
	line, _ := c.file.Pos(at)
	r := Rule{Name: s.Name, Line: line, Method: s.Match.Method, Action: s.Action}
	switch {
	case s.Name == "":
		r.Name = fmt.Sprintf("rule-%d", i+1)
	case !namePattern.MatchString(s.Name) || s.Name == Unmatched:
		c.fail(at+".name", "rule name %q must match %s and not be %q", s.Name, namePattern, Unmatched)
	}
	if s.Match.Method != "" && !methodPattern.MatchString(s.Match.Method) {
		c.fail(at+".match.method", "method %q must be one upper-case HTTP method such as GET", s.Match.Method)
	}
	if s.Match.Path != "" {
		re, err := regexp.Compile(s.Match.Path)
		if err != nil {
			c.fail(at+".match.path", "path is not a regular expression: %v", err)
		}
		r.Path = re
	}
	switch s.Action {
	case Allow, Deny, Ask:
	case "":
		c.fail(at, "rule %d has no action (allow, deny or ask)", i+1)
	default:
		c.fail(at+".action", "action %q is not allow, deny or ask", s.Action)
	}
	return r
}

func (c *compiler) fail(path, format string, args ...any) {
	line, col := c.file.Pos(path)
	c.errs = append(c.errs, &RuleError{File: c.name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

// ruleError names the file in a yamlfile error.
func ruleError(name string, err error) error {
	var ye *yamlfile.Error
	if errors.As(err, &ye) {
		return &RuleError{File: name, Line: ye.Line, Column: ye.Column, Msg: ye.Msg}
	}
	return &RuleError{File: name, Line: 1, Column: 1, Msg: err.Error()}
}
