package codexbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Bounds on one call to Gatehouse that is not cut short by an answer.
const (
	fileTimeout   = 30 * time.Second
	cancelTimeout = 5 * time.Second
)

// Run starts codex (argv: the program and its arguments, e.g. codex
// app-server) as a child and relays between it and the caller's stdio until
// the child exits. Codex's stderr is passed through. When ctx ends, the child
// gets SIGTERM, and SIGKILL if it has not exited 5 s later.
func (b *Bridge) Run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		return errors.New("no codex program to run")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	toCodex, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	fromCodex, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	relayErr := b.Relay(ctx, stdin, stdout, toCodex, fromCodex)
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return nil // asked to stop
	}
	return errors.Join(relayErr, waitErr)
}
