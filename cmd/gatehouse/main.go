// Command gatehouse is the operator's inbox for AI agents: the server and the
// tools around it, as subcommands of one binary.
//
// Built with -tags agent it has only the commands a machine that runs agents
// needs (hook, ask, runtime, gate, codex, acp): none of them links the database,
// the server or their dependencies, whose package initialisation alone costs
// every short-lived process (the hook, once per tool call) several
// milliseconds and megabytes.
//
// The commands are one table (commands): the dispatcher, every usage text and
// the test that runs each command with -h, --help and a bad flag all read it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runFunc runs a command with its arguments (after its name) and returns the
// process's exit code.
type runFunc func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// command is one node of the command tree: a leaf has run, a group has subs.
type command struct {
	name string
	args string // the synopsis after the command's path: flags and arguments
	help string // what it does; the first line also shows in the list of commands
	run  runFunc
	subs []*command
	// elsewhere is set on the full build's commands in the agent build: the
	// command answers that it is not in this build.
	elsewhere bool
}

// commands is the command tree: the server's commands (none in the agent
// build), then the agent's.
func commands() []*command { return append(serverCommands(), agentCommands()...) }

// agentCommands are the commands of both builds.
func agentCommands() []*command {
	return []*command{
		{name: "ask", run: runAsk,
			args: `--title "…" [--option id:label[:allow|deny]]… [--timeout 10m] [--json] [--url URL] [--token T]`,
			help: "File a request and wait for the operator's decision: exit 0 allow, 1 deny, 2 expired or timed out, 3 error, 4 another option (its id printed)."},
		{name: "hook", help: "Answer an agent's hook through Gatehouse.", subs: []*command{
			{name: "claude-code", run: runClaudeCodeHook,
				args: "[--timeout 5m] [--url URL] [--token T] < hook-input.json",
				help: "Answer one Claude Code hook event (stdin) through Gatehouse; prints the hook's JSON answer."},
			{name: "codex", run: runCodexHook,
				args: "[--timeout 5m] [--url URL] [--token T] < hook-input.json",
				help: "Answer one Codex hook event (stdin) through Gatehouse; prints Codex's hook answer, or nothing."},
		}},
		{name: "codex", help: "Run Codex with its approvals filed in Gatehouse.", subs: []*command{
			{name: "app-server", run: runCodexAppServer,
				args: "[--url URL] [--token T] [--codex PATH] [--timeout 1h] [--runtime NAME --callback-listen ADDR] [-- CODEX ARGS]",
				help: "Run Codex's app-server as a child, every approval it asks for filed in Gatehouse too."},
		}},
		{name: "acp", run: runACP,
			args: "[--timeout 10m] [--url URL] [--token T] [--headless [--prompt-file F]] -- AGENT [ARGS…]",
			help: "Run an Agent Client Protocol agent as a child, every permission request it sends filed in Gatehouse too."},
		{name: "runtime", run: runRuntime,
			args: "--name N [--machine M] [--callback-listen ADDR] [--pull] [--url URL] [--token T]",
			help: "Register a runtime and print each decision forwarded to it (by callback or pull) as a JSON line."},
		{name: "gate", run: runGate,
			args: `--upstream URL --sandbox ID [--listen 127.0.0.1:9000] [--rules gate.yaml] [--credential "H: $VAR"]… [--strip H]… [--max-body 10MiB] [--tls-cert F --tls-key F]`,
			help: "Serve an HTTP API's gate: each call the rules do not allow or deny asks the operator."},
	}
}

// run finds the command args name and runs it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	if isHelp(args[0]) {
		if args[0] == "help" && len(args) > 1 {
			// gatehouse help token create: gatehouse token create -h
			return run(ctx, append(args[1:len(args):len(args)], "-h"), stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage())
		return 0
	}
	return dispatch(ctx, nil, commands(), args, stdin, stdout, stderr)
}

// dispatch runs the command among cmds that args[0] names, below path.
func dispatch(ctx context.Context, path []string, cmds []*command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := find(cmds, args[0])
	if c == nil {
		where := strings.Join(append([]string{"gatehouse"}, path...), " ")
		fmt.Fprintf(stderr, "%s: unknown command %q\nRun \"%s -h\" for its commands.\n", where, args[0], where)
		return 2
	}
	path = append(path[:len(path):len(path)], c.name)
	args = args[1:]
	switch {
	case c.elsewhere:
		fmt.Fprintf(stderr, "gatehouse: %q is a server command, not in this agent build (built with -tags agent, for a machine that only runs agents); "+
			"build without the tag (go install ./cmd/gatehouse) for the server and its database commands\n", strings.Join(path, " "))
		return 2
	case c.run != nil:
		return c.run(ctx, args, stdin, stdout, stderr)
	case len(args) == 0:
		fmt.Fprint(stderr, groupUsage(path, c))
		return 2
	case isHelp(args[0]):
		fmt.Fprint(stdout, groupUsage(path, c))
		return 0
	}
	return dispatch(ctx, path, c.subs, args, stdin, stdout, stderr)
}

func find(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

// lookup is the command at path ("token create"), or nil.
func lookup(path string) *command {
	cmds := commands()
	var c *command
	for _, name := range strings.Fields(path) {
		if c = find(cmds, name); c == nil {
			return nil
		}
		cmds = c.subs
	}
	return c
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

const usageHead = "gatehouse: the operator's inbox for AI agents\n\nUsage:\n"

// usage is the list of every command.
func usage() string {
	var b strings.Builder
	b.WriteString(usageHead)
	listCommands(&b, nil, commands())
	b.WriteString("\n" + buildNote + "Run \"gatehouse COMMAND -h\" for a command's flags.\n")
	return b.String()
}

// groupUsage lists a group's commands.
func groupUsage(path []string, c *command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUsage:\n", firstLine(c.help))
	listCommands(&b, path[:len(path)-1], []*command{c})
	fmt.Fprintf(&b, "\nRun \"gatehouse %s COMMAND -h\" for a command's flags.\n", strings.Join(path, " "))
	return b.String()
}

// listCommands writes each leaf below path: its synopsis, then what it does.
func listCommands(b *strings.Builder, path []string, cmds []*command) {
	for _, c := range cmds {
		p := append(path[:len(path):len(path)], c.name)
		switch {
		case c.elsewhere:
		case c.subs != nil:
			listCommands(b, p, c.subs)
		default:
			fmt.Fprintf(b, "  %s\n      %s\n", synopsis(strings.Join(p, " "), c), firstLine(c.help))
		}
	}
}

func synopsis(path string, c *command) string {
	return strings.TrimSpace("gatehouse " + path + " " + c.args)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// env returns the environment variable's value, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}
