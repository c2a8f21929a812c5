// Command gatehouse is the operator's inbox for AI agents: the server and the
// tools around it, as subcommands of one binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `gatehouse: the operator's inbox for AI agents

Usage:
  gatehouse serve [--addr 127.0.0.1:8080] [--database sqlite:PATH|postgres://…] [--base-url URL] [--rules FILE]
  gatehouse token create --role operator|runtime|agent --name NAME [--groups G1,G2] [--for OPERATOR] [--database URL] [--create]
  gatehouse token list [--database URL]
  gatehouse token revoke ID|NAME [--database URL]
  gatehouse session list|revoke ID [--database URL]
  gatehouse rules check FILE
  gatehouse rules test FILE [REQUEST.json]   (the request on stdin when not named)
  gatehouse push test [--database URL] [--base-url URL]
  gatehouse runtime --name N [--machine M] [--callback-listen ADDR] [--pull] [--url URL] [--token T]
  gatehouse ask --title "…" [--option id:label:effect]… [--timeout 10m] [--json] [--url URL] [--token T]
  gatehouse hook claude-code [--timeout 5m] [--url URL] [--token T] < hook-input.json
  gatehouse gate --upstream URL --sandbox ID [--listen 127.0.0.1:9000] [--rules gate.yaml] [--credential "H: $VAR"]… [--strip H]… [--max-body 10MiB] [--tls-cert F --tls-key F]
  gatehouse audit export [--database URL] [--after SEQ]
  gatehouse audit verify [--database URL | --file EXPORT.jsonl [--key PUBLIC_KEY]] [--head HEAD.json]
  gatehouse hook codex [--timeout 5m] [--url URL] [--token T] < hook-input.json
  gatehouse codex app-server [--url URL] [--token T] [--codex PATH] [--timeout 1h] [--runtime NAME --callback-listen ADDR] [-- CODEX ARGS]

The default database is gatehouse.db in $XDG_DATA_HOME/gatehouse (else
~/.local/share/gatehouse); serve creates it, other commands need --create.
Run "gatehouse COMMAND -h" for a command's flags.
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
	return map[string]command{
		"serve":   runServe,
		"token":   runToken,
		"session": runSession,
		"ask":     runAsk,
		"hook":    runHook,
		"rules":   runRules,
		"push":    runPush,
		"runtime": runRuntime,
		"gate":    runGate,
		"audit":   runAudit,
		"codex":   runCodex,
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gatehouse: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return cmd(ctx, args[1:], stdin, stdout, stderr)
}
