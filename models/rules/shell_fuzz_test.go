package rules_test

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models/rules"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// anyRules approves any line a rule may pass at all: what the fuzz checks is
// that "may pass" never includes a line that runs more than its simple
// commands say.
const anyRules = `rules:
  - name: anything
    match: {tool: Bash, command: '.*'}
    action: approve
`

// FuzzShellRule: the parser never panics, and a line an approve rule passes runs
// exactly the simple commands the rules saw and opens no file but /dev/null.
// The oracle is independent of the rules code: mvdan's interpreter runs the
// line with every program, file and directory stubbed out, and reports each
// command as it would run, after expansion.
func FuzzShellRule(f *testing.F) {
	for _, c := range bypasses {
		f.Add(c.cmd)
	}
	for _, c := range ordinary {
		f.Add(c.cmd)
	}
	rs := mustRules(f, anyRules)
	f.Fuzz(func(t *testing.T, line string) {
		l := rules.ParseShell(line)
		v := rs.Evaluate(shellReq(line))
		if v.Action != rules.RuleApprove {
			return
		}
		if !l.Safe() {
			t.Fatalf("%q approved but not safe: %+v", line, l)
		}
		var seen []string
		for _, c := range l.Commands {
			seen = append(seen, c.Text)
		}
		ran, opened := run(t, line)
		for _, args := range ran {
			if !slices.Contains(seen, args) {
				t.Fatalf("%q approved, but it runs %q, which the rules never saw (they saw %q)", line, args, seen)
			}
		}
		for _, p := range opened {
			if p != "/dev/null" {
				t.Fatalf("%q approved, but it opens %q", line, p)
			}
		}
	})
}

// run interprets line with nothing real behind it: programs do nothing, files
// cannot be opened (each attempt is reported), the environment is empty.
func run(t *testing.T, line string) (ran, opened []string) {
	var mu sync.Mutex // the stages of a pipeline run at once
	note := func(to *[]string, s string) {
		mu.Lock()
		defer mu.Unlock()
		*to = append(*to, s)
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		t.Fatalf("%q approved but does not parse: %v", line, err)
	}
	r, err := interp.New(
		interp.Env(expand.ListEnviron()),
		interp.Dir(t.TempDir()),
		interp.StdIO(nil, io.Discard, io.Discard),
		interp.CallHandler(func(_ context.Context, args []string) ([]string, error) {
			note(&ran, strings.Join(args, " "))
			return args, nil
		}),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(context.Context, []string) error { return nil }
		}),
		interp.OpenHandler(func(_ context.Context, path string, _ int, _ os.FileMode) (io.ReadWriteCloser, error) {
			note(&opened, path)
			return nil, errors.New("no files in a fuzz test")
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.Run(ctx, file) // a failing command is fine; what it tried is the point
	mu.Lock()
	defer mu.Unlock()
	return ran, opened
}
