package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/acp"
)

// runACP is `gatehouse acp`: an Agent Client Protocol agent as a child, with
// every permission request it sends filed in Gatehouse too and its sessions
// reported (who works, who waits).
func runACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("acp", stdout, stderr)
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "agent token")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long a permission request waits for the operator; then the editor alone decides (headless: the agent's reject option)")
	headless := fs.Bool("headless", false, "no editor: the bridge starts a session and sends one prompt itself")
	promptFile := fs.String("prompt-file", "", "with --headless: the prompt's text (default: stdin)")
	waitReply := fs.Duration("wait-reply", 0, "with --headless: after each turn, wait up to this long for the operator's answer on the session's waiting item and send it as the next prompt")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return fs.usageError(2, "the agent to run is missing: gatehouse acp [FLAGS] -- AGENT [ARGS…]")
	}
	if *timeout < time.Second {
		fmt.Fprintln(stderr, "gatehouse acp: --timeout must be at least 1s")
		return 2
	}
	if *promptFile != "" && !*headless {
		fmt.Fprintln(stderr, "gatehouse acp: --prompt-file goes with --headless")
		return 2
	}
	if *waitReply != 0 && !*headless {
		fmt.Fprintln(stderr, "gatehouse acp: --wait-reply goes with --headless (an editor sends the prompts)")
		return 2
	}
	if *waitReply < 0 {
		fmt.Fprintln(stderr, "gatehouse acp: --wait-reply must not be negative")
		return 2
	}
	if err := checkClient(*url, *token); err != nil {
		fmt.Fprintf(stderr, "gatehouse acp: %v; until then the editor alone decides\n", err)
	}
	machine, _ := os.Hostname()
	b := &acp.Bridge{Gatehouse: explainedClient(*url, *token), Timeout: *timeout, Log: stderr, Machine: machine, WaitReply: *waitReply}
	if *headless {
		prompt, err := readPrompt(*promptFile, stdin)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse acp:", err)
			return 2
		}
		cwd, err := os.Getwd()
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse acp:", err)
			return 1
		}
		return b.RunHeadless(ctx, argv, cwd, prompt, stdout, stderr)
	}
	code, err := b.Run(ctx, argv, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse acp:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// readPrompt is the headless prompt: the file's text, else stdin's.
func readPrompt(file string, stdin io.Reader) (string, error) {
	var b []byte
	var err error
	if file != "" {
		b, err = os.ReadFile(file)
	} else {
		b, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	}
	if err != nil {
		return "", err
	}
	p := strings.TrimSpace(string(b))
	if p == "" {
		return "", fmt.Errorf("the prompt is empty")
	}
	return p, nil
}
