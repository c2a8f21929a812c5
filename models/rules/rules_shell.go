package rules

import (
	"regexp"
	"slices"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
	"github.com/gatehousehq/gatehouse/models"
)

// matchesCommand is the command matcher: every rule (Evaluate, and so
// `gatehouse rules test`), every remembered allow (RememberedMatch, as the
// store matches a grant) and every remember choice the page offers
// (RememberChoices) tests a command through it, so they share one reading of
// a line: its hazards (a prefix off the allowlist among them) and its simple
// commands. It tests the rule's command conditions: its command pattern and
// its git_push. For a shell tool the command is parsed (once per evaluation:
// *sh caches it) and read as the shell reads it; for any other tool the
// pattern is tested against the whole command, while git_push still reads it
// as a shell would (a push filed without tool Bash is still a push).
func (ru *rule) matchesCommand(r *models.Request, sh **ShellLine) bool {
	if ru.command == nil && ru.GitPush == nil {
		return true
	}
	re := ru.command
	if !ShellTool(r.Tool) {
		if re != nil && !re.MatchString(r.Command) {
			return false
		}
		if ru.GitPush == nil {
			return true
		}
		re = nil // tested whole, above
	}
	if *sh == nil {
		l := ParseShell(r.Command)
		*sh = &l
	}
	return ru.matchesShell(*sh, r.Command, re)
}

// restricts reports whether the rule only ever makes a request harder to
// allow (deny, require), so that its conditions match on the safe side.
func (ru *rule) restricts() bool { return ru.Action == RuleDeny || ru.Action == RuleRequire }

// matchesShell matches a shell command as a shell reads it. A deny matches when any simple command does (nested ones and what a
// wrapper such as sudo or `sh -c` would run included), or the line as written
// does (a pattern spanning a pipe, a line that does not parse). Require is a
// restriction too, so it matches as deny does: `cd repo && git push origin main`
// must not escape a two-person rule for `git push origin main`. Approve and hold match
// only a line with nothing hidden in it whose every simple command matches.
// re is the command pattern to test (nil: none); a git_push condition must hold
// for the same simple command as the pattern.
func (ru *rule) matchesShell(l *ShellLine, raw string, re *regexp.Regexp) bool {
	if ru.restricts() {
		if ru.GitPush == nil && re.MatchString(raw) {
			return true
		}
		if l.Err != "" && ru.GitPush != nil {
			// No simple commands to read: the line as written, on the safe side.
			return (re == nil || re.MatchString(raw)) && ru.GitPush.gitPushUnparsed(raw)
		}
		for _, c := range l.Commands {
			if ru.matchesOne(c, re, true) {
				return true
			}
		}
		return false
	}
	if !l.Safe() {
		return false
	}
	for _, c := range l.Commands {
		if !c.Static || c.Nested || !ru.matchesOne(c, re, false) {
			return false
		}
	}
	return true
}

// matchesOne tests the command pattern re (nil: none) and git_push against one
// simple command; restrict reads git_push on a restriction's safe side.
func (ru *rule) matchesOne(c ShellCommand, re *regexp.Regexp, restrict bool) bool {
	return (re == nil || re.MatchString(c.Text)) && ru.matchesGitPush(c, restrict)
}

// CommandMatch is one simple command of a shell request and the first rule
// whose pattern (and other matches) it meets; for `gatehouse rules test`.
type CommandMatch struct {
	ShellCommand
	Rule string // "" when no rule's command pattern matches it
	Line int
}

// TraceShell parses a shell request's command and names, for each simple
// command, the first rule whose other fields match r and whose command pattern
// matches that command. ok is false when r's tool is not a shell.
func (rs *Rules) TraceShell(r *models.Request) (l ShellLine, cmds []CommandMatch, ok bool) {
	if !ShellTool(r.Tool) {
		return ShellLine{}, nil, false
	}
	l = ParseShell(r.Command)
	for _, c := range l.Commands {
		m := CommandMatch{ShellCommand: c}
		if rs != nil {
			for i := range rs.rules {
				ru := &rs.rules[i]
				if (ru.command != nil || ru.GitPush != nil) && ru.matches(r) && ru.matchesOne(c, ru.command, ru.restricts()) {
					m.Rule, m.Line = ru.Name, ru.Line
					break
				}
			}
		}
		cmds = append(cmds, m)
	}
	return l, cmds, true
}

// prefixPattern is a command pattern that starts with a prefix assignment.
var prefixPattern = lazyregexp.New(`^\^?(?:\((?:\?:)?)?[A-Za-z_][A-Za-z0-9_]*=`)

// PrefixWarning says, for a rule whose command pattern starts with a prefix
// assignment (`^GOFLAGS=-mod=mod go build`), why that part never matches a
// shell line: each simple command is matched with its prefix assignments
// left out, and one off the allowlist keeps approve and hold off the line.
// "" for any other rule. For `gatehouse rules check`.
func (ru Rule) PrefixWarning() string {
	if ru.Command == "" || !prefixPattern.MatchString(ru.Command) || (len(ru.Tool) > 0 && !slices.ContainsFunc(ru.Tool, ShellTool)) {
		return ""
	}
	return "its command pattern starts with an assignment, but a shell command is matched with its prefix " +
		"assignments left out (only " + prefixAllowlist + " may stand before a command an approve or hold " +
		"matches): for a Bash or shell request, that pattern matches no line"
}
