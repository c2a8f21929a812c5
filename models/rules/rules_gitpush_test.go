package rules_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// gitPushRules: a two-person rule for pushes to main, a deny for force pushes
// to release, and an approve for pushes to staging alone.
const gitPushRules = `rules:
  - name: push-main
    match:
      git_push: {branches: [main]}
    action: require
    approvers: {groups: [release], required: 2}
  - name: force-release
    match:
      tool: Bash
      command: ' (--force|-f)( |$)'
      git_push: {branches: [release]}
    action: deny
  - name: push-staging
    match:
      tool: Bash
      git_push: {branches: refs/heads/staging}
    action: approve
`

// mayPushMain are pushes that may update main: each needs the two-person rule.
var mayPushMain = []struct{ name, cmd string }{
	{"plain", "git push origin main"},
	{"forced by +", "git push origin +main"},
	{"src:dst", "git push origin main:main"},
	{"full refs", "git push origin refs/heads/main:refs/heads/main"},
	{"config before push", "git -c x=y push origin main"},
	{"--force", "git push --force origin main"},
	{"HEAD:main", "git push origin HEAD:main"},
	{"-f", "git push -f origin main"},
	{"--git-dir=", "git --git-dir=x push origin main"},
	{"--git-dir apart", "git --git-dir x push origin main"},
	{"-C dir", "git -C repo push origin main"},
	{"delete by :main", "git push origin :main"},
	{"--delete", "git push origin --delete main"},
	{"-d bundled", "git push -fd origin main"},
	{"--all", "git push --all"},
	{"--all with a remote", "git push --all origin"},
	{"--mirror", "git push --mirror"},
	{"--mirror abbreviated", "git push --mir origin"},
	{"--branches", "git push --branches origin"},
	{"--prune", "git push --prune origin feature"},
	{"remote and no refspec", "git push origin"},
	{"no remote", "git push"},
	{"--repo and no refspec", "git push --repo=origin"},
	{"HEAD alone", "git push origin HEAD"},
	{"matching", "git push origin :"},
	{"pattern", "git push origin 'refs/heads/*:refs/heads/*'"},
	{"another src", "git push origin feature:main"},
	{"heads/", "git push origin heads/main"},
	{"case", "git push origin MAIN"},
	{"among others", "git push origin feature main"},
	{"after a push option", "git push -o ci.skip origin main"},
	{"option after refspecs", "git push origin main --force"},
	{"after --", "git push origin -- main"},
	{"a program path", "/usr/bin/git push origin main"},
	{"a variable refspec", "git push origin $BRANCH"},
	{"variable options", "git push $OPTS origin feature"},
	{"a variable command", "git $CMD origin main"},
	{"an alias on the line", "git -c alias.p=push p origin feature"},
	{"push config on the line", "git -c push.default=upstream push origin feature"},
	{"remote config on the line", "git -c remote.origin.push=feature:main push origin feature"},
	{"an unknown option", "git push --frobnicate origin feature"},
	{"after cd", "cd repo && git push origin main"},
	{"after a semicolon", "echo done; git push origin main"},
	{"under sudo", "sudo git push origin main"},
	{"in sh -c", "sh -c 'git push origin main'"},
	{"in a substitution", "echo $(git push origin main)"},
	{"in a pipeline", "git push origin main 2>&1 | tee log"},
	{"quoted", `'git' "push" origin 'main'`},
	{"a line that does not parse", "git push origin main 'oops"},
}

// notPushMain are commands that update no main.
var notPushMain = []struct{ name, cmd string }{
	{"another branch", "git push origin feature"},
	{"a longer name", "git push origin main-fix"},
	{"main to another branch", "git push origin main:feature"},
	{"a tag called main", "git push origin refs/tags/main"},
	{"tag NAME", "git push origin tag main"},
	{"--tags", "git push --tags origin"},
	{"a push option's value", "git push -o main origin feature"},
	{"--repo's value", "git push --repo main origin feature"},
	{"a negative refspec", "git push origin feature ^main"},
	{"pull", "git pull origin main"},
	{"log", "git log main"},
	{"-C's value", "git -C push log main"},
	{"echo", "echo git push origin main"},
	{"status", "git status"},
}

func TestGitPushRule(t *testing.T) {
	rs := mustRules(t, gitPushRules)
	t.Run("may update main: the two-person rule", func(t *testing.T) {
		for _, c := range mayPushMain {
			t.Run(c.name, func(t *testing.T) {
				if v := rs.Evaluate(shellReq(c.cmd)); v.Rule != "push-main" || v.Approvers == nil || v.Approvers.Required != 2 {
					t.Fatalf("%q: %+v, want push-main", c.cmd, v)
				}
			})
		}
	})
	t.Run("does not update main", func(t *testing.T) {
		for _, c := range notPushMain {
			t.Run(c.name, func(t *testing.T) {
				if v := rs.Evaluate(shellReq(c.cmd)); v.Rule == "push-main" {
					t.Fatalf("%q: %+v, want no push-main", c.cmd, v)
				}
			})
		}
	})
	t.Run("whatever the tool", func(t *testing.T) {
		r := req(func(r *models.Request) { r.Command = "git push origin main" })
		if v := rs.Evaluate(r); v.Rule != "push-main" {
			t.Fatalf("a push filed without tool Bash: %+v", v)
		}
	})

	t.Run("with a command pattern, one simple command meets both", func(t *testing.T) {
		for cmd, want := range map[string]string{
			"git push --force origin release":       "force-release",
			"git push -f origin release":            "force-release",
			"git push origin release --force":       "force-release",
			"git push origin release":               "",
			"git push --force origin feature":       "",
			"echo --force; git push origin release": "",
		} {
			if v := rs.Evaluate(shellReq(cmd)); v.Rule != want {
				t.Errorf("%q: rule %q, want %q", cmd, v.Rule, want)
			}
		}
	})

	t.Run("approve needs every ref the push updates to be one of the branches", func(t *testing.T) {
		for cmd, approved := range map[string]bool{
			"git push origin staging":                            true,
			"git push origin HEAD:staging":                       true,
			"git push origin +staging":                           true,
			"git push origin refs/heads/staging":                 true,
			"git push -u origin staging":                         true,
			"git push origin staging && git push origin staging": true,
			"git push origin":                                    false, // the current branch
			"git push":                                           false,
			"git push --all origin":                              false,
			"git push origin staging feature":                    false,
			"git push origin :staging":                           false, // a deletion
			"git push origin --delete staging":                   false,
			"git push origin $B":                                 false,
			"git push origin staging-2":                          false,
			"cd repo && git push origin staging":                 false, // cd is no push to staging
			"git push origin staging > log":                      false,
			"git -c alias.p=push push origin staging":            true, // the alias is not the command
			"git -c remote.origin.push=x push origin staging":    false,
		} {
			if v := rs.Evaluate(shellReq(cmd)); (v.Rule == "push-staging") != approved {
				t.Errorf("%q: %+v, approved should be %v", cmd, v, approved)
			}
		}
	})

	t.Run("rules test names the rule for the push", func(t *testing.T) {
		_, cmds, _ := rs.TraceShell(shellReq("cd repo && git push origin main"))
		if len(cmds) != 2 || cmds[0].Rule != "" || cmds[1].Rule != "push-main" {
			t.Fatalf("%+v", cmds)
		}
	})

	t.Run("described", func(t *testing.T) {
		got := rs.List()[0].Describe()
		if want := "git push to main → require 2 approval(s) from release"; got != want {
			t.Fatalf("%q, want %q", got, want)
		}
	})
}

func TestGitPushRuleErrors(t *testing.T) {
	for name, c := range map[string]struct{ match, msg string }{
		"no branches":    {"{}", "git_push needs branches"},
		"empty list":     {"{branches: []}", "an empty list matches nothing"},
		"not a name":     {"{branches: ['main branch']}", "not a branch name"},
		"a pattern":      {"{branches: ['release/*']}", "not a branch name"},
		"dots":           {"{branches: [a..b]}", "not a branch name"},
		"an unknown key": {"{branch: [main]}", `unknown field "branch"`},
	} {
		t.Run(name, func(t *testing.T) {
			src := "rules:\n  - name: a\n    match:\n      git_push: " + c.match + "\n    action: deny\n"
			_, err := rules.ParseRules("rules.yaml", []byte(src))
			var re *rules.RuleError
			if !errors.As(err, &re) || re.Line != 4 || !strings.Contains(re.Msg, c.msg) {
				t.Fatalf("%v, want line 4: %q", err, c.msg)
			}
		})
	}
}

// FuzzGitPushRule: whatever the line, when the shell would run `git push
// REMOTE … main …` (no options, so the check needs no reading of git's), the
// two-person rule for main holds it. The oracle is mvdan's interpreter, as in
// FuzzShellRule: it reports each command as it would run, after expansion.
func FuzzGitPushRule(f *testing.F) {
	for _, c := range mayPushMain {
		f.Add(c.cmd)
	}
	for _, c := range notPushMain {
		f.Add(c.cmd)
	}
	for _, c := range bypasses {
		f.Add(c.cmd)
	}
	rs := mustRules(f, gitPushRules)
	f.Fuzz(func(t *testing.T, line string) {
		v := rs.Evaluate(shellReq(line))
		if v.Rule == "push-main" {
			return
		}
		for _, args := range ranCalls(line) {
			if pushesMain(args) {
				t.Fatalf("%q runs %q, which pushes main, and the rule did not hold it (%+v)", line, args, v)
			}
		}
	})
}

// pushesMain: git push REMOTE REFSPEC… with a refspec whose destination is
// main, options (and `tag NAME`) left out of it.
func pushesMain(args []string) bool {
	if len(args) < 4 || args[0] != "git" || args[1] != "push" {
		return false
	}
	for _, a := range args[2:] {
		if strings.HasPrefix(a, "-") || a == "tag" {
			return false
		}
	}
	for _, spec := range args[3:] {
		_, dst, ok := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if !ok {
			dst = strings.TrimPrefix(spec, "+")
		}
		if dst == "main" || dst == "refs/heads/main" {
			return true
		}
	}
	return false
}

// ranCalls interprets line with nothing real behind it (as run does) and
// returns every command it would call, stopping after a few hundred: a loop
// must not hold up the fuzzer.
func ranCalls(line string) [][]string {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var mu sync.Mutex
	var ran [][]string
	dir, err := os.MkdirTemp("", "gitpush-fuzz")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(dir)
	r, err := interp.New(
		interp.Env(expand.ListEnviron()),
		interp.Dir(dir),
		interp.StdIO(nil, io.Discard, io.Discard),
		interp.CallHandler(func(_ context.Context, args []string) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, args)
			if len(ran) > 500 {
				cancel()
			}
			return args, nil
		}),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(context.Context, []string) error { return nil }
		}),
		interp.OpenHandler(func(context.Context, string, int, os.FileMode) (io.ReadWriteCloser, error) {
			return nil, errors.New("no files in a fuzz test")
		}),
	)
	if err != nil {
		return nil
	}
	_ = r.Run(ctx, file)
	mu.Lock()
	defer mu.Unlock()
	return ran
}
