//go:build !agent

package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/client"
)

// buildWait bounds the waits that include a build of the whole binary (go run,
// go install): minutes on a cold cache, not the seconds of testkit's waits.
const buildWait = 10 * time.Minute

// TestQuickStart runs README's quick start as written, its commands taken from
// README's code blocks so the two cannot drift: on a clean HOME, `go run …
// serve`, then in a second shell the install line, the token commands and the
// `ask` line; the test decides the request through the API and `ask` must exit
// 0 (its `&& ./deploy.sh` runs).
func TestQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shellBlocks(string(readme))
	setup := blockWith(t, blocks, "go run ./cmd/gatehouse serve")
	if cmds := commandLines(setup); len(cmds) != 2 || !strings.HasPrefix(cmds[1], "go test ./...") {
		t.Fatalf("the set-up block is not the two commands (serve, go test ./...): %q", cmds)
	}
	serveLine := commandLines(setup)[0]
	install := blockWith(t, blocks, "go install ./cmd/gatehouse")
	if !strings.Contains(install, `export PATH="$(go env GOPATH)/bin:$PATH"`) {
		t.Fatalf("the install line does not put $(go env GOPATH)/bin on PATH: %q", install)
	}
	tokens := blockWith(t, blocks, "gatehouse token create --role agent")
	ask := blockWith(t, blocks, "gatehouse ask ")

	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	home, work := t.TempDir(), t.TempDir()
	env := cleanEnv(t, home)

	// The server, as README starts it, on a free port.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve := exec.CommandContext(ctx, "sh", "-c", serveLine)
	serve.Dir, serve.Env = repo, append(env, "GATEHOUSE_ADDR=127.0.0.1:0")
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run and its child stop together
	serve.Cancel = func() error { return syscall.Kill(-serve.Process.Pid, syscall.SIGINT) }
	serve.WaitDelay = 30 * time.Second
	serve.Stderr = &testWriter{t: t, prefix: "serve: "}
	serveOut, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	defer func() {
		cancel()
		select {
		case err := <-served:
			if err != nil && !strings.Contains(err.Error(), "interrupt") && !strings.Contains(err.Error(), "exit status 1") {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("serve did not stop")
		}
	}()
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(serveOut)
		for sc.Scan() {
			if base, ok := strings.CutPrefix(sc.Text(), "gatehouse listening on "); ok {
				listening <- strings.TrimSpace(base)
			}
		}
		served <- serve.Wait()
	}()
	var base string
	select {
	case base = <-listening:
	case <-time.After(buildWait):
		t.Fatalf("serve printed no listening line within %s", buildWait)
	}

	// The second shell: README's blocks, pointed at the server's port, in a
	// directory with a deploy.sh that leaves a mark.
	if err := os.WriteFile(filepath.Join(work, "deploy.sh"), []byte("#!/bin/sh\necho deployed > deployed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	opFile := filepath.Join(work, "op")
	script := "set -e\ncd '" + repo + "'\n" + install + "\ncd '" + work + "'\n" + tokens +
		"\nprintf '%s\\n' \"$OP\" > '" + opFile + "'\n" + ask
	for _, a := range []string{"http://127.0.0.1:8080", "http://localhost:8080"} {
		script = strings.ReplaceAll(script, a, base)
	}
	walk := exec.CommandContext(ctx, "sh", "-c", script)
	walk.Dir, walk.Env = work, env
	if dir, err := exec.Command("git", "-C", repo, "rev-parse", "--absolute-git-dir").Output(); err == nil {
		walk.Env = append(walk.Env, "GIT_DIR="+strings.TrimSpace(string(dir))) // for the title's git rev-parse
	}
	walk.Stdout = &testWriter{t: t, prefix: "walk: "}
	walkErr, err := walk.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := walk.Start(); err != nil {
		t.Fatal(err)
	}
	waiting, read := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(read) // Wait only after every read
		sc := bufio.NewScanner(walkErr)
		for sc.Scan() {
			t.Log("walk: " + sc.Text())
			if id := requestID.FindString(sc.Text()); id != "" && strings.Contains(sc.Text(), "waiting for a decision") {
				waiting <- id
			}
		}
	}()
	var id string
	select {
	case id = <-waiting:
	case <-time.After(buildWait):
		t.Fatalf("ask did not say which request it waits on within %s", buildWait)
	}

	t.Run("the operator decides through the API and ask exits 0", func(t *testing.T) {
		op, err := os.ReadFile(opFile)
		if err != nil {
			t.Fatal(err)
		}
		operator := client.New(base, strings.TrimSpace(string(op)))
		r, err := operator.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := operator.Decide(ctx, r.ID, r.Version, "allow", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case <-read:
		case <-time.After(buildWait):
			t.Fatal("ask did not end")
		}
		if err := walk.Wait(); err != nil {
			t.Fatalf("the walk failed: %v", err)
		}
		if _, err := os.Stat(filepath.Join(work, "deployed")); err != nil {
			t.Fatalf("ask did not exit 0: ./deploy.sh did not run: %v", err)
		}
	})
	t.Run("the install line put gatehouse in $(go env GOPATH)/bin", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(home, "go", "bin", "gatehouse")); err != nil {
			t.Fatal(err)
		}
	})
}

// shellBlocks are README's ```sh code blocks.
func shellBlocks(md string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

func blockWith(t *testing.T, blocks []string, s string) string {
	t.Helper()
	for _, b := range blocks {
		if strings.Contains(b, s) {
			return b
		}
	}
	t.Fatalf("README has no sh block with %q", s)
	return ""
}

// commandLines are a block's commands: its lines without comments or blanks.
func commandLines(block string) []string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// cleanEnv is a newcomer's environment: HOME a new directory, no Gatehouse or
// XDG settings; the go command keeps this machine's build and module caches
// (a cold cache only makes the first build slower) and its toolchain.
func cleanEnv(t *testing.T, home string) []string {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GOTOOLCHAIN=local"}
	for _, name := range []string{"GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		env = append(env, name+"="+strings.TrimSpace(string(out)))
	}
	for _, name := range []string{"TMPDIR", "GOFLAGS", "GOPROXY", "LANG"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// testWriter logs what a child process writes.
type testWriter struct {
	t      *testing.T
	prefix string
}

func (w *testWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(w.prefix + l)
	}
	return len(p), nil
}

var _ io.Writer = (*testWriter)(nil)
