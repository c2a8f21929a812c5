package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Grace periods when the agent is to stop: after its stdin closes (some
// agents, Codex's among them, never exit on that alone), after SIGTERM, and
// for its output to end once it exited (a child of its own may hold it).
var (
	stdinGrace = 2 * time.Second
	termGrace  = 5 * time.Second
	drainGrace = 2 * time.Second
)

// Run starts the agent (argv: the program and its arguments) and relays
// between it and the editor's stdio until the agent exits; the agent's
// stderr is passed through. It returns the agent's exit code (128 + the
// signal when a signal it was not sent by the bridge ended it). When the
// editor's side ends, or ctx does, the agent's stdin is closed and it gets
// SIGTERM if it has not exited, then SIGKILL.
func (b *Bridge) Run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(argv) == 0 {
		return 2, errors.New("no agent program to run")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	toAgent, err := cmd.StdinPipe()
	if err != nil {
		return 1, err
	}
	// Its own pipe, not StdoutPipe, so Wait can run while the relay reads.
	fromAgent, agentOut, err := os.Pipe()
	if err != nil {
		return 1, err
	}
	cmd.Stdout = agentOut
	if err := cmd.Start(); err != nil {
		fromAgent.Close()
		agentOut.Close()
		return 127, fmt.Errorf("start %s: %w", argv[0], err)
	}
	agentOut.Close()

	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()

	editorGone := make(chan struct{})
	var stopping sync.Once
	var stopped atomic.Bool
	stop := func() {
		stopping.Do(func() {
			stopped.Store(true)
			go b.stopAgent(cmd, toAgent, exited)
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-editorGone:
			stop()
		case <-exited:
		}
	}()
	go func() {
		// The agent exited but its output is still held open: stop reading.
		<-exited
		select {
		case <-time.After(drainGrace):
			fromAgent.Close()
		case <-editorGone:
		}
	}()
	relayErr := b.Relay(ctx, stdin, stdout, &notifyCloser{WriteCloser: toAgent, closed: editorGone}, fromAgent)
	<-exited
	fromAgent.Close()
	if errors.Is(relayErr, os.ErrClosed) {
		relayErr = nil
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		if stopped.Load() {
			code = 0
		}
	}
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) {
		waitErr = nil // the code says it
	}
	return code, errors.Join(relayErr, waitErr)
}

// stopAgent closes the agent's stdin, then sends SIGTERM and SIGKILL, each
// after a grace period, until it exits.
func (b *Bridge) stopAgent(cmd *exec.Cmd, toAgent io.Closer, exited <-chan struct{}) {
	_ = toAgent.Close()
	for _, step := range []struct {
		wait time.Duration
		sig  os.Signal
	}{{stdinGrace, syscall.SIGTERM}, {termGrace, syscall.SIGKILL}} {
		select {
		case <-exited:
			return
		case <-time.After(step.wait):
			_ = cmd.Process.Signal(step.sig)
		}
	}
}

// notifyCloser closes closed when the relay closes the agent's stdin: the
// editor went away.
type notifyCloser struct {
	io.WriteCloser
	once   sync.Once
	closed chan struct{}
}

func (n *notifyCloser) Close() error {
	n.once.Do(func() { close(n.closed) })
	return n.WriteCloser.Close()
}
