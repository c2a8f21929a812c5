// Package rules is the policy engine: a YAML rules file, parsed and compiled
// (rules_parse.go), evaluated against a request at filing and again on each
// edit (rules.go, verdict.go).
//
// A rule matches a request's kind, runtime, tool, risk, command and text, and
// approves, denies, holds (decides at the end of a window unless a person does
// first) or requires an approval policy (Approvers). A shell command is matched
// as a shell reads it (shell.go, rules_shell.go, parsed with mvdan.cc/sh): a
// deny or require matches if any command on the line does, an approve or hold
// only if every command does and nothing is hidden in the line. An edit never
// leads to approve (EvaluateEdit), and a request under an approval policy is
// left to its approvers (Verdict.UnderPolicy).
//
// A remembered allow's command family is offered and matched here too
// (remember.go): as an approve rule, every simple command must match. Rules,
// remembered allows and the remember choices share one command matcher
// (matchesCommand, rules_shell.go); a prefix assignment passes it only when
// its name is on a short allowlist (shell.go, prefixRefused). Its
// adversarial corpus is in rulestest, for every surface's tests.
//
// RuleSet holds the rules in force and swaps in a new file on reload
// (ruleset.go, WatchRules). The package imports the domain (models) and no
// database; the store calls it when it files or edits a request.
package rules
