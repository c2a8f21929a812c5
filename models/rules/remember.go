package rules

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gatehousehq/gatehouse/models"
)

// RememberChoice is one command family an operator may remember an allow
// for: Match is the pattern as a rules file writes a command condition,
// Words the same for a person.
type RememberChoice struct {
	Match string
	Words string
}

// RememberChoices are the families offered for remembering an allow of
// command run through tool, narrowest first: the exact command (for a shell,
// each simple command on the line as the shell reads it), then, for a shell
// line of one simple command, its program and subcommand with any arguments.
// None is offered for a shell line the rules could never approve (it hides
// what runs) or an empty command, and none whose pattern would be longer
// than a grant may store.
//
// What is offered is what the command matcher passes: a choice whose pattern
// would not match this very command as a remembered allow (a prefix off the
// allowlist, anything hidden in the line) is never offered, so the page, the
// store and the rules cannot disagree on what a remembered allow covers.
func RememberChoices(tool, command string) []RememberChoice {
	if strings.TrimSpace(command) == "" || len(command) > models.MaxMatch {
		return nil
	}
	var sh *ShellLine
	return slices.DeleteFunc(rememberChoices(tool, command, &sh), func(c RememberChoice) bool {
		if len(c.Match) > models.MaxMatch {
			return true
		}
		m, err := CompileRemembered(c.Match)
		return err != nil || !m.MatchesParsed(tool, command, &sh)
	})
}

func rememberChoices(tool, command string, sh **ShellLine) []RememberChoice {
	if !ShellTool(tool) {
		return []RememberChoice{{Match: "^" + regexp.QuoteMeta(command) + "$", Words: "exactly " + command}}
	}
	l := ParseShell(command)
	*sh = &l
	if !l.Safe() {
		return nil
	}
	var texts []string
	for _, c := range l.Commands {
		if !c.Static || c.Nested {
			return nil
		}
		if !slices.Contains(texts, c.Text) {
			texts = append(texts, c.Text)
		}
	}
	quoted := make([]string, len(texts))
	for i, t := range texts {
		quoted[i] = regexp.QuoteMeta(t)
	}
	if len(texts) > 1 {
		return []RememberChoice{{
			Match: "^(?:" + strings.Join(quoted, "|") + ")$",
			Words: "only these commands, exactly, alone or together: " + strings.Join(texts, " · "),
		}}
	}
	out := []RememberChoice{{Match: "^" + quoted[0] + "$", Words: "exactly " + texts[0]}}
	words := l.Commands[0].Words
	family := words[:1]
	if len(words) > 1 && !strings.HasPrefix(words[1], "-") {
		family = words[:2]
	}
	head := strings.Join(family, " ")
	return append(out, RememberChoice{Match: "^" + regexp.QuoteMeta(head) + "( .*)?$", Words: head + " with any arguments"})
}

// RememberedMatch is a remembered allow's pattern, compiled to match as an
// approve rule does: for a shell tool, every simple command on the line must
// match and nothing on it may hide what runs; otherwise the whole command.
type RememberedMatch struct{ ru rule }

// compiled caches the patterns of stored grants: every filing of a token with
// grants matches each of them, and compiling costs more than matching.
var compiled struct {
	sync.Mutex
	m map[string]*RememberedMatch
}

// maxCompiled bounds the cache; past it, it starts over.
const maxCompiled = 4096

// CompileRemembered compiles a remembered allow's pattern. It must be anchored
// at both ends (^…$), so what it covers is what it reads as.
func CompileRemembered(match string) (*RememberedMatch, error) {
	compiled.Lock()
	m, ok := compiled.m[match]
	compiled.Unlock()
	if ok {
		return m, nil
	}
	m, err := compileRemembered(match)
	if err != nil {
		return nil, err
	}
	compiled.Lock()
	if compiled.m == nil || len(compiled.m) >= maxCompiled {
		compiled.m = map[string]*RememberedMatch{}
	}
	compiled.m[match] = m
	compiled.Unlock()
	return m, nil
}

func compileRemembered(match string) (*RememberedMatch, error) {
	if len(match) > models.MaxMatch {
		return nil, models.Errorf(models.ECodeInvalid, "remember.match is longer than %d bytes", models.MaxMatch)
	}
	if !strings.HasPrefix(match, "^") || !strings.HasSuffix(match, "$") || strings.HasSuffix(match, `\$`) {
		return nil, models.Errorf(models.ECodeInvalid, "remember.match %q must be anchored: start with ^ and end with $", match)
	}
	re, err := regexp.Compile(match)
	if err != nil {
		return nil, models.Errorf(models.ECodeInvalid, "remember.match is not a regular expression: %v", err)
	}
	return &RememberedMatch{ru: rule{Rule: Rule{Action: RuleApprove, Command: match}, command: re, effect: models.EffectAllow}}, nil
}

// Matches reports whether command, run through tool, is what the pattern
// remembers.
func (m *RememberedMatch) Matches(tool, command string) bool {
	var sh *ShellLine
	return m.MatchesParsed(tool, command, &sh)
}

// MatchesParsed is Matches for a caller that tests several patterns against
// one command: *sh holds the command as the shell reads it, parsed by the
// first pattern that needs it.
func (m *RememberedMatch) MatchesParsed(tool, command string, sh **ShellLine) bool {
	return m.ru.matchesCommand(&models.Request{Tool: tool, Command: command}, sh)
}

// RememberWords is a pattern in words: the offered family's words when it is
// one of them, else the pattern itself.
func RememberWords(tool, command, match string) string {
	return RememberWordsIn(RememberChoices(tool, command), match)
}

// RememberWordsIn is RememberWords for a caller that holds the command's
// RememberChoices already, so the command is not parsed again.
func RememberWordsIn(choices []RememberChoice, match string) string {
	if c, ok := offered(choices, match); ok {
		return c.Words
	}
	return "each command matching " + match
}

// offered is the choice among choices whose pattern is match.
func offered(choices []RememberChoice, match string) (RememberChoice, bool) {
	for _, c := range choices {
		if c.Match == match {
			return c, true
		}
	}
	return RememberChoice{}, false
}

// Offered reports whether match is the pattern of one of choices: one
// RememberChoices has already matched against the command it was made for.
func Offered(choices []RememberChoice, match string) bool {
	_, ok := offered(choices, match)
	return ok
}

// RememberRuleText is a remembered allow written as a rules file's match, so
// the operator reads the rule that will apply.
func RememberRuleText(tool, match string) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	if tool == "" {
		return "match: {command: " + q(match) + "}"
	}
	return "match: {tool: " + q(tool) + ", command: " + q(match) + "}"
}
