package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/codexbridge"
)

// runCodex is `gatehouse codex app-server`: Codex's app-server as a child,
// with every approval it asks for filed in Gatehouse too.
func runCodex(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "app-server" {
		fmt.Fprintln(stderr, "usage: gatehouse codex app-server [--url URL] [--token T] [--codex PATH] [--timeout 1h] [-- CODEX ARGS]")
		return 2
	}
	fs := flag.NewFlagSet("codex app-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.String("token", env("GATEHOUSE_TOKEN", ""), "agent or runtime token (GATEHOUSE_TOKEN)")
	codex := fs.String("codex", env("GATEHOUSE_CODEX", "codex"), "the codex program (GATEHOUSE_CODEX)")
	expiry := fs.Duration("timeout", time.Hour, "how long an approval stays open in Gatehouse; the local client can answer it after that too")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *expiry < time.Second {
		fmt.Fprintln(stderr, "gatehouse codex app-server: --timeout must be at least 1s")
		return 2
	}
	b := &codexbridge.Bridge{
		Gatehouse: client.New(*url, *token), ExpiresIn: int64((*expiry + time.Second - 1) / time.Second), Log: stderr,
	}
	argv := append([]string{*codex, "app-server"}, fs.Args()...)
	if err := b.Run(ctx, argv, stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "gatehouse codex app-server:", err)
		return 1
	}
	return 0
}
