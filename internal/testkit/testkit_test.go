package testkit_test

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// `go test` without -v and without a terminal (CI, an editor, a pipe) still
// shows what was skipped: go test hides a passing package's output, so the
// line goes to the go command's own stderr.
func TestSkipLineWithoutTerminal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "test", "-count=1", "./testdata/skips")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	want := "skips: skipped 1 tests: TestNeedsSomething: something is missing: set SOMETHING"
	if !strings.Contains(stdout.String()+stderr.String(), want) {
		t.Fatalf("the skip line is not shown:\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
}
