package rules

import "github.com/gatehousehq/gatehouse/models"

// matchesCommand tests the rule's command pattern. For a shell tool the command
// is parsed (once per evaluation: *sh caches it) and read as the shell reads it;
// for any other tool the pattern is tested against the whole command.
func (ru *rule) matchesCommand(r *models.Request, sh **ShellLine) bool {
	if ru.command == nil {
		return true
	}
	if !ShellTool(r.Tool) {
		return ru.command.MatchString(r.Command)
	}
	if *sh == nil {
		l := ParseShell(r.Command)
		*sh = &l
	}
	return ru.matchesShell(*sh, r.Command)
}

// matchesShell matches a shell command as a shell reads it. A deny matches when any simple command does (nested ones and what a
// wrapper such as sudo or `sh -c` would run included), or the line as written
// does (a pattern spanning a pipe, a line that does not parse). Require is a
// restriction too, so it matches as deny does: `cd repo && git push origin main`
// must not escape a two-person rule for `git push origin main`. Approve and hold match
// only a line with nothing hidden in it whose every simple command matches.
func (ru *rule) matchesShell(l *ShellLine, raw string) bool {
	if ru.Action == RuleDeny || ru.Action == RuleRequire {
		if ru.command.MatchString(raw) {
			return true
		}
		for _, c := range l.Commands {
			if ru.command.MatchString(c.Text) {
				return true
			}
		}
		return false
	}
	if !l.Safe() {
		return false
	}
	for _, c := range l.Commands {
		if !c.Static || c.Nested || !ru.command.MatchString(c.Text) {
			return false
		}
	}
	return true
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
				if ru.command != nil && ru.matches(r) && ru.command.MatchString(c.Text) {
					m.Rule, m.Line = ru.Name, ru.Line
					break
				}
			}
		}
		cmds = append(cmds, m)
	}
	return l, cmds, true
}
