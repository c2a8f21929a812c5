// Command gatehouse is the operator's inbox for AI agents: the server and the
// tools around it, as subcommands of one binary.
//
// Built with -tags agent it has only the commands a machine that runs agents
// needs (hook, ask, runtime, gate, codex, acp): none of them links the database,
// the server or their dependencies, whose package initialisation alone costs
// every short-lived process (the hook, once per tool call) several
// milliseconds and megabytes.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"syscall"
)

const usageHead = `gatehouse: the operator's inbox for AI agents

Usage:
`

// agentUsage lists the commands of both builds.
const agentUsage = `  gatehouse ask --title "…" [--option id:label[:allow|deny]]… [--timeout 10m] [--json] [--url URL] [--token T]
      exits 0 allow, 1 deny, 2 expired or timed out, 3 error, 4 another option (its id printed)
  gatehouse hook claude-code [--timeout 5m] [--url URL] [--token T] < hook-input.json
  gatehouse hook codex [--timeout 5m] [--url URL] [--token T] < hook-input.json
  gatehouse codex app-server [--url URL] [--token T] [--codex PATH] [--timeout 1h] [--runtime NAME --callback-listen ADDR] [-- CODEX ARGS]
  gatehouse acp [--timeout 10m] [--url URL] [--token T] [--headless [--prompt-file F]] -- AGENT [ARGS…]
  gatehouse runtime --name N [--machine M] [--callback-listen ADDR] [--pull] [--url URL] [--token T]
  gatehouse gate --upstream URL --sandbox ID [--listen 127.0.0.1:9000] [--rules gate.yaml] [--credential "H: $VAR"]… [--strip H]… [--max-body 10MiB] [--tls-cert F --tls-key F]
`

const usageTail = `Run "gatehouse COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand: it returns the process's exit code.
type command func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

func commands() map[string]command {
	cmds := map[string]command{
		"ask":     runAsk,
		"hook":    runHook,
		"runtime": runRuntime,
		"gate":    runGate,
		"codex":   runCodex,
		"acp":     runACP,
	}
	maps.Copy(cmds, serverCommands())
	return cmds
}

func usage() string { return usageHead + serverUsage + agentUsage + "\n" + buildNote + usageTail }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage())
		return 0
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gatehouse: unknown command %q\n\n%s", args[0], usage())
		return 2
	}
	return cmd(ctx, args[1:], stdin, stdout, stderr)
}

// env returns the environment variable's value, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}
