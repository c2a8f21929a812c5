//go:build !agent

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/web"
)

// listServerRules shows the rules a server has in force, through its API with
// an operator's token: the file need not be readable where this runs.
func listServerRules(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("rules list", stdout, stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "an operator token")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if fs.NArg() != 0 {
		return fs.usageError(2, "unexpected argument %q", fs.Arg(0))
	}
	rs, err := client.New(*url, *token).Rules(ctx)
	if err != nil {
		reportAPIError(stderr, err)
		return 1
	}
	if rs.File == "" {
		fmt.Fprintln(stdout, "no rules file: every request goes to the operator")
		return 0
	}
	fmt.Fprintf(stdout, "%s: %d %s in force (digest %s)\n", rs.File, len(rs.Rules), plural(len(rs.Rules), "rule", "rules"), rs.Digest)
	for i, r := range rs.Rules {
		fmt.Fprintf(stdout, "%3d. %s (line %d): %s\n", i+1, r.Name, r.Line, r.Summary)
	}
	return 0
}

// runRulesCheck is `gatehouse rules check FILE`. The rules commands exit 0
// done, 1 invalid file or request, 2 usage.
func runRulesCheck(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("rules check", stdout, stderr)
	positional, err := fs.parseInterspersed(args)
	if err != nil {
		return exitCode(err, 2)
	}
	if len(positional) != 1 {
		return fs.usageError(2, "want one rules FILE, got %d arguments", len(positional))
	}
	return checkRules(positional[0], stdout, stderr)
}

// runRulesTest is `gatehouse rules test FILE [REQUEST.json]`: the request on
// stdin when not named (or named -).
func runRulesTest(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("rules test", stdout, stderr)
	positional, err := fs.parseInterspersed(args)
	if err != nil {
		return exitCode(err, 2)
	}
	if len(positional) < 1 || len(positional) > 2 {
		return fs.usageError(2, "want a rules FILE and at most one REQUEST.json, got %d arguments", len(positional))
	}
	in := stdin
	if len(positional) == 2 && positional[1] != "-" {
		f, err := os.Open(positional[1])
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse rules test:", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	return testRules(positional[0], in, stdout, stderr)
}

func checkRules(path string, stdout, stderr io.Writer) int {
	rs, err := rules.LoadRules(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok, %d %s\n", path, rs.Len(), plural(rs.Len(), "rule", "rules"))
	for i, r := range rs.List() {
		fmt.Fprintf(stdout, "%3d. %s (line %d): %s\n", i+1, r.Name, r.Line, r.Describe())
	}
	for _, r := range rs.List() {
		if w := r.PrefixWarning(); w != "" {
			fmt.Fprintf(stdout, "warning: rule %q (line %d): %s\n", r.Name, r.Line, w)
		}
	}
	return 0
}

// testRequest is a request as filed with POST /v1/requests, read as strictly
// as the API reads it: a misspelt member ("comand") is refused, naming it,
// instead of testing a request without it. created_by stands for the filer,
// e.g. "runtime:ci", which `runtime` in a rule can match.
type testRequest struct {
	api.NewRequest `json:",inline"`
	CreatedBy      string `json:"created_by"`
}

func testRules(path string, in io.Reader, stdout, stderr io.Writer) int {
	rs, err := rules.LoadRules(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	var tr testRequest
	body, err := io.ReadAll(io.LimitReader(in, 1<<20))
	if err == nil {
		err = web.DecodeStrict(body, &tr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "request: %s\n", models.ErrorDetail(err))
		return 1
	}
	var opts []models.Option
	for _, o := range tr.Options {
		opts = append(opts, models.Option(o))
	}
	if tr.Options == nil && !models.Silent(tr.Kind) && !(tr.Kind == models.KindQuestion && tr.AllowAnswer) {
		opts = []models.Option{{ID: "once", Label: "Allow once", Effect: models.EffectAllow}, {ID: "deny", Label: "Deny", Effect: models.EffectDeny}}
		fmt.Fprintln(stdout, "the request names no options: testing with once (allow) and deny (deny)")
	}
	n := models.NewRequest{Kind: tr.Kind, Title: tr.Title, Summary: tr.Summary, Detail: tr.Detail, Risk: tr.Risk,
		Tool: tr.Tool, Command: tr.Command, Options: opts, AllowAnswer: tr.AllowAnswer,
		DefaultOption: tr.DefaultOption, Source: tr.Source, RuntimeID: tr.RuntimeID}
	if err := n.Normalize(); err != nil {
		fmt.Fprintf(stderr, "request: %v\n", err)
		return 1
	}
	r := &models.Request{Kind: n.Kind, Title: n.Title, Summary: n.Summary, Risk: n.Risk, Tool: n.Tool,
		Command: n.Command, Options: n.Options, RuntimeID: n.RuntimeID, CreatedBy: tr.CreatedBy}
	fmt.Fprintln(stdout, describeVerdict(r, rs.Evaluate(r)))
	if l, cmds, ok := rs.TraceShell(r); ok {
		fmt.Fprint(stdout, describeShell(l, cmds))
	}
	return 0
}

// describeShell shows how the rules read a shell command: each simple command
// with the first rule whose pattern it matches, and what in the line keeps any
// approve or hold rule from matching it.
func describeShell(l rules.ShellLine, cmds []rules.CommandMatch) string {
	var b strings.Builder
	if l.Err != "" {
		fmt.Fprintf(&b, "the command does not parse as bash (%s): only a deny rule, matching the line as written, can match it\n", l.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "the command read as bash: %d simple %s\n", len(cmds), plural(len(cmds), "command", "commands"))
	for _, c := range cmds {
		where := ""
		switch {
		case c.Wrapper != "":
			where = " (what " + c.Wrapper + " might run; deny rules only)"
		case c.Nested:
			where = " (inside a substitution)"
		}
		match := "no rule"
		if c.Rule != "" {
			match = fmt.Sprintf("rule %q (line %d)", c.Rule, c.Line)
		}
		fmt.Fprintf(&b, "  %-6s %q%s: %s\n", c.Pos, c.Text, where, match)
	}
	switch {
	case len(l.Hazards) > 0:
		b.WriteString("no approve or hold rule can match it, because of:\n")
		for _, h := range l.Hazards {
			fmt.Fprintf(&b, "  - %s\n", h)
		}
	case len(cmds) == 0:
		b.WriteString("it runs no command: no approve or hold rule can match it\n")
	default:
		b.WriteString("an approve or hold rule matches only if its pattern matches every one of these\n")
	}
	return b.String()
}

// describeVerdict says in words what the rules would do with r.
func describeVerdict(r *models.Request, v rules.Verdict) string {
	label := func(id string) string {
		if o, ok := r.Option(id); ok {
			return fmt.Sprintf("%q (%s)", id, o.Label)
		}
		return fmt.Sprintf("%q", id)
	}
	var b strings.Builder
	switch {
	case v.Rule == "":
		b.WriteString("no rule matches: the request goes to the operator")
	case v.Deferred != "":
		fmt.Fprintf(&b, "rule %q (line %d) matches but leaves the request to the operator: %s", v.Rule, v.Line, v.Deferred)
	case v.Action == rules.RuleHold:
		fmt.Fprintf(&b, "rule %q (line %d) matches: hold\n", v.Rule, v.Line)
		fmt.Fprintf(&b, "the operator sees it marked HELD for %s; if nobody decides by then, it is decided %s with decided_via %q",
			v.Window, label(v.Option), models.ViaRuleWindow(v.Rule))
	default:
		fmt.Fprintf(&b, "rule %q (line %d) matches: %s\n", v.Rule, v.Line, v.Action)
		fmt.Fprintf(&b, "decided at once: %s with decided_via %q", label(v.Option), models.ViaRule(v.Rule))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
