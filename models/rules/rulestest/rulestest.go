// Package rulestest holds the command matcher's adversarial corpora for tests
// of every surface that matches a command (rules, remembered allows in the
// store, the page's remember choices, `gatehouse rules test`): one corpus, so
// that every matcher is held to the same lines.
package rulestest

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// EnvPrefix is one line of testdata/env_prefix.txt: a command approved as
// written, and the same command run with Prefix before it.
type EnvPrefix struct {
	Prefix  string // one or more NAME=value assignments, as the shell reads them
	Command string // the command a rule or a remembered allow approves
	Match   bool   // whether the prefixed line must still match what approves Command
	Line    int    // where it is in the file
}

// Text is the prefixed line an agent files.
func (c EnvPrefix) Text() string { return c.Prefix + " " + c.Command }

// Name names the case for a subtest.
func (c EnvPrefix) Name() string { return fmt.Sprintf("%d %s", c.Line, c.Text()) }

//go:embed testdata/env_prefix.txt
var envPrefixFile string

// EnvPrefixCorpus is every case of testdata/env_prefix.txt, in file order.
// A malformed line panics: the corpus is part of the test, not input.
func EnvPrefixCorpus() []EnvPrefix {
	var out []EnvPrefix
	for i, line := range strings.Split(envPrefixFile, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, " | ")
		if len(f) != 3 {
			panic(fmt.Sprintf("env_prefix.txt:%d: want `yes|no | PREFIX | COMMAND`, got %q", i+1, line))
		}
		want := strings.TrimSpace(f[0])
		if want != "yes" && want != "no" {
			panic(fmt.Sprintf("env_prefix.txt:%d: %q is neither yes nor no", i+1, want))
		}
		out = append(out, EnvPrefix{Prefix: strings.TrimSpace(f[1]), Command: strings.TrimSpace(f[2]), Match: want == "yes", Line: i + 1})
	}
	return out
}

// EnvPrefixCommands are the corpus's distinct commands, in file order.
func EnvPrefixCommands() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range EnvPrefixCorpus() {
		if !seen[c.Command] {
			seen[c.Command] = true
			out = append(out, c.Command)
		}
	}
	return out
}

// RulesFile is a rules file with one rule per corpus command, in the order of
// EnvPrefixCommands, named "cmd-N": action (approve, deny or hold) for that
// command exactly, as a rule that means one command is written.
func RulesFile(action string) string {
	var b strings.Builder
	b.WriteString("rules:\n")
	for i, cmd := range EnvPrefixCommands() {
		fmt.Fprintf(&b, "  - name: cmd-%d\n    match: {tool: [Bash, shell], command: '%s'}\n    action: %s\n", i, strings.ReplaceAll(ExactPattern(cmd), "'", "''"), action)
		if action == "hold" {
			b.WriteString("    window: 1m\n    then: approve\n")
		}
	}
	return b.String()
}

// ExactPattern is the pattern of cmd exactly.
func ExactPattern(cmd string) string { return "^" + regexp.QuoteMeta(cmd) + "$" }
