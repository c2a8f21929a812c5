package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// sentinel stands for every secret in the environment: no output may hold it.
const sentinel = "SENTINEL-s3cr3t"

// secretEnv sets every variable a command may read a secret from to one
// holding the sentinel: tokens, a database URL's password, a server URL's.
func secretEnv(t *testing.T) []string {
	env := []string{
		"GATEHOUSE_TOKEN=" + sentinel,
		"GATEHOUSE_DATABASE=postgres://gatehouse:" + sentinel + "@127.0.0.1:1/gatehouse",
		"GATEHOUSE_URL=http://agent:" + sentinel + "@127.0.0.1:1",
		"UPSTREAM_TOKEN=" + sentinel,
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return env
}

// invocation is one run of the command line: its arguments, exit code and output.
type invocation struct {
	args           []string
	code           int
	stdout, stderr string
}

// runner runs the gatehouse command line of one build.
type runner func(t *testing.T, args ...string) invocation

// TestEveryCommandHelp runs every command and subcommand of the command table
// with -h, --help and a flag it does not have: the help is its usage on
// stdout and exits 0; the mistake exits non-zero with one line that names the
// command once; and no output ever holds a secret from the environment. It
// runs the build it is compiled in, in process, and the agent build's binary
// besides (go test -tags agent runs the agent build in process).
func TestEveryCommandHelp(t *testing.T) {
	env := secretEnv(t)
	inProcess := func(t *testing.T, args ...string) invocation {
		t.Helper()
		var out, errOut bytes.Buffer
		code := run(t.Context(), args, strings.NewReader(""), &out, &errOut)
		return invocation{args, code, out.String(), errOut.String()}
	}
	t.Run(buildName, func(t *testing.T) { checkCommandLine(t, commands(), inProcess) })
	if buildName == "agent build" {
		return
	}
	t.Run("agent build", func(t *testing.T) {
		t.Setenv("CGO_ENABLED", "0")
		bin := gatehousetest.Build(t, "-tags", "agent")
		binary := func(t *testing.T, args ...string) invocation {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), testkit.CapWait)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = append(os.Environ(), env...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			return invocation{args, cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
		}
		var stubs []*command
		for _, name := range serverCommandNames {
			stubs = append(stubs, &command{name: name, elsewhere: true})
		}
		checkCommandLine(t, append(stubs, agentCommands()...), binary)
	})
}

// TestServerCommandNames holds the agent build's list of the commands it
// leaves out equal to the full build's table, so that each one answers where
// it is instead of "unknown command".
func TestServerCommandNames(t *testing.T) {
	if buildName == "agent build" {
		t.Skip("the full build's table is not in the agent build")
	}
	var agent, names []string
	for _, c := range agentCommands() {
		agent = append(agent, c.name)
	}
	for _, c := range commands() {
		if !strings.Contains(" "+strings.Join(agent, " ")+" ", " "+c.name+" ") {
			names = append(names, c.name)
		}
	}
	if strings.Join(names, " ") != strings.Join(serverCommandNames, " ") {
		t.Fatalf("the full build's own commands are %q; serverCommandNames says %q", names, serverCommandNames)
	}
}

// checkCommandLine walks the table cmds as run answers it.
func checkCommandLine(t *testing.T, cmds []*command, run runner) {
	t.Run("gatehouse", func(t *testing.T) {
		for _, h := range []string{"-h", "--help", "help"} {
			got := run(t, h)
			noSecret(t, got)
			if got.code != 0 || !strings.HasPrefix(got.stdout, "gatehouse: the operator's inbox") || got.stderr != "" {
				t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", got.args, got.code, got.stdout, got.stderr)
			}
			for _, c := range cmds {
				if !c.elsewhere && !strings.Contains(got.stdout, "  gatehouse "+c.name) {
					t.Errorf("%v does not list %s", got.args, c.name)
				}
			}
		}
		got := run(t, "--no-such-flag")
		noSecret(t, got)
		onePrefix(t, got, "gatehouse")
	})
	var walk func(path []string, c *command)
	walk = func(path []string, c *command) {
		path = append(path[:len(path):len(path)], c.name)
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			for _, h := range []string{"-h", "--help"} {
				got := run(t, append(path, h)...)
				noSecret(t, got)
				switch {
				case c.elsewhere:
					if got.code != 2 || !strings.Contains(got.stderr, `"`+name+`" is a server command, not in this agent build`) {
						t.Fatalf("%v: exit %d, stderr %q; want 2 and where the command is", got.args, got.code, got.stderr)
					}
					continue
				case got.code != 0 || got.stderr != "":
					t.Fatalf("%v: exit %d, stderr %q; want 0 and the usage on stdout", got.args, got.code, got.stderr)
				case c.subs != nil:
					for _, s := range c.subs {
						if !strings.Contains(got.stdout, "  gatehouse "+name+" "+s.name) {
							t.Errorf("%v does not list %s:\n%s", got.args, s.name, got.stdout)
						}
					}
				case !strings.HasPrefix(got.stdout, "Usage: gatehouse "+name):
					t.Fatalf("%v printed no usage:\n%s", got.args, got.stdout)
				}
			}
			got := run(t, append(path, "--no-such-flag")...)
			noSecret(t, got)
			switch {
			case c.elsewhere:
				if got.code != 2 || !strings.Contains(got.stderr, "not in this agent build") {
					t.Fatalf("%v: exit %d, stderr %q", got.args, got.code, got.stderr)
				}
			case c.subs != nil:
				onePrefix(t, got, "gatehouse "+name)
			default:
				onePrefix(t, got, "gatehouse "+name)
				if !strings.Contains(got.stderr, "-no-such-flag") {
					t.Fatalf("%v: the error does not name the flag: %q", got.args, got.stderr)
				}
			}
		})
		for _, s := range c.subs {
			walk(path, s)
		}
	}
	for _, c := range cmds {
		walk(nil, c)
	}
}

// noSecret fails the test when the invocation printed the sentinel.
func noSecret(t *testing.T, got invocation) {
	t.Helper()
	if strings.Contains(got.stdout+got.stderr, sentinel) {
		t.Errorf("%v printed a secret:\nstdout: %s\nstderr: %s", got.args, got.stdout, got.stderr)
	}
}

// onePrefix checks a failed invocation: a non-zero exit, nothing on stdout,
// and an error that starts with prefix and names no command again.
func onePrefix(t *testing.T, got invocation, prefix string) {
	t.Helper()
	if got.code == 0 || got.stdout != "" {
		t.Fatalf("%v: exit %d, stdout %q; want an error", got.args, got.code, got.stdout)
	}
	if !strings.HasPrefix(got.stderr, prefix+": ") {
		t.Fatalf("%v: stderr %q does not start with %q", got.args, got.stderr, prefix+": ")
	}
	noDoubledPrefix(t, got)
}

// noDoubledPrefix fails the test when a line of stderr names a command after
// its start, as in "gatehouse ask: gatehouse: 401 …".
func noDoubledPrefix(t *testing.T, got invocation) {
	t.Helper()
	prefixes := commandPrefixes()
	for line := range strings.Lines(got.stderr) {
		_, rest, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		for _, p := range prefixes {
			if strings.Contains(rest, p) {
				t.Fatalf("%v: %q names the command twice (%q)", got.args, line, p)
			}
		}
	}
}

// commandPrefixes are the prefixes an error line may start with: "gatehouse:"
// and "gatehouse PATH:" for every command in the table.
func commandPrefixes() []string {
	out := []string{"gatehouse: "}
	var walk func(path string, cmds []*command)
	walk = func(path string, cmds []*command) {
		for _, c := range cmds {
			out = append(out, path+" "+c.name+": ")
			walk(path+" "+c.name, c.subs)
		}
	}
	walk("gatehouse", commands())
	return out
}
