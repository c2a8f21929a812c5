// Package testkit holds what every package's tests share: bounded waits that
// fail with a message instead of hanging, and skips that are summed up at the
// end of a package's run, so `go test ./...` says what did not run and why.
package testkit

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// CapWait bounds every wait on an event in a test. It is not a timing
// assertion: a healthy wait ends in milliseconds, and the cap only turns a
// hang into a failure that names what never came.
const CapWait = 30 * time.Second

// Recv receives one value from ch, failing the test after CapWait.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(CapWait)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %s for %s: it never came", CapWait, what)
		panic("unreachable")
	}
}

// Wait waits for wg, failing the test after CapWait.
func Wait(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	Recv(t, (<-chan struct{})(done), what)
}

// The skips of this test binary. A process-wide list is the one way TestMain
// can learn them; it lives only in test binaries.
var (
	mu      sync.Mutex
	skipped []string
)

// Skipf records why t is skipped, for Main's summary, and skips it.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	mu.Lock()
	skipped = append(skipped, t.Name()+": "+strings.SplitN(reason, "\n", 2)[0])
	mu.Unlock()
	t.Skip(reason)
}

// Main runs the tests and prints one line summing up the skips:
// "skipped N tests: NAME: reason; …". `go test ./...` shows a passing
// package's output only with -v, so without -v the line goes past it: to the
// go command's own stderr (the terminal, or a CI log), else to the terminal.
func Main(m *testing.M) { os.Exit(Summarized(m).Run()) }

// Summarized wraps m so its Run prints the skip line, for a TestMain that
// hands m to something else (goleak.VerifyTestMain).
func Summarized(m interface{ Run() int }) interface{ Run() int } { return summarized{m} }

type summarized struct{ m interface{ Run() int } }

func (s summarized) Run() int {
	code := s.m.Run()
	if line := Summary(); line != "" {
		w, done := summaryOut()
		fmt.Fprintln(w, line)
		done()
	}
	return code
}

// summaryOut is where the skip line goes: stdout with -v (go test shows it
// then); else the stderr of the go command that ran this binary, which go test
// does not capture; else the terminal; else stdout.
func summaryOut() (io.Writer, func()) {
	if testing.Verbose() {
		return os.Stdout, func() {}
	}
	parent := fmt.Sprintf("/proc/%d/", os.Getppid())
	if comm, err := os.ReadFile(parent + "comm"); err == nil && strings.TrimSpace(string(comm)) == "go" {
		if f, err := os.OpenFile(parent+"fd/2", os.O_WRONLY|os.O_APPEND, 0); err == nil {
			return f, func() { f.Close() }
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		return tty, func() { tty.Close() }
	}
	return os.Stdout, func() {}
}

// Summary is the skip line, "" when nothing was skipped. The same reason for
// many tests (a missing database) is told once, with the count.
func Summary() string {
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) == 0 {
		return ""
	}
	byReason := map[string][]string{}
	for _, s := range skipped {
		name, reason, _ := strings.Cut(s, ": ")
		byReason[reason] = append(byReason[reason], name)
	}
	var parts []string
	for reason, names := range byReason {
		who := names[0]
		if len(names) > 1 {
			who = fmt.Sprintf("%s and %d more", names[0], len(names)-1)
		}
		parts = append(parts, who+": "+reason)
	}
	sort.Strings(parts)
	exe, _ := os.Executable()
	pkg := strings.TrimSuffix(exe[strings.LastIndex(exe, "/")+1:], ".test")
	return fmt.Sprintf("%s: skipped %d tests: %s", pkg, len(skipped), strings.Join(parts, "; "))
}
