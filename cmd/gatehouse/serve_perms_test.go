//go:build !agent

package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// serveStderr starts serve on database, waits for its listening line and
// answers what it had written on stderr by then (the start-up notices come
// before it). The server stops when the test ends.
func serveStderr(t *testing.T, database string) string {
	t.Helper()
	out, errs := newLines(), newLines()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database", database}, nil, out, errs)
	}()
	t.Cleanup(func() {
		cancel()
		if code := testkit.Recv(t, done, "serve to end"); code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	nextLine(t, out, "listening line")
	return strings.Join(drain(errs), "")
}

// privateDir is a temporary directory only its owner may use (t.TempDir
// follows the umask).
func privateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestServeWarnsOfLoosePermissions(t *testing.T) {
	t.Run("a database others may read is named once at start", func(t *testing.T) {
		path := filepath.Join(privateDir(t), "gatehouse.db")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil { // past the umask
			t.Fatal(err)
		}
		stderr := serveStderr(t, "sqlite:"+path)
		if n := strings.Count(stderr, "warning: the database file "+path+" has mode -rw-r--r--"); n != 1 {
			t.Fatalf("%d warnings naming the file, want 1:\n%s", n, stderr)
		}
		if strings.Contains(stderr, "data directory") {
			t.Fatalf("a private directory drew a warning:\n%s", stderr)
		}
	})
	t.Run("a data directory others may enter is named", func(t *testing.T) {
		dir := filepath.Join(privateDir(t), "shared")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stderr := serveStderr(t, "sqlite:"+filepath.Join(dir, "gatehouse.db"))
		if n := strings.Count(stderr, "warning: the data directory "+dir+" has mode -rwxr-xr-x"); n != 1 {
			t.Fatalf("%d warnings naming the directory, want 1:\n%s", n, stderr)
		}
	})
	t.Run("a database serve creates is its owner's alone, and draws no warning", func(t *testing.T) {
		path := filepath.Join(privateDir(t), "gatehouse.db")
		stderr := serveStderr(t, "sqlite:"+path)
		if strings.Contains(stderr, "warning") {
			t.Fatalf("a fresh database drew a warning:\n%s", stderr)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != fs.FileMode(0o600) {
			t.Fatalf("the new database file has mode %s, want -rw-------", fi.Mode().Perm())
		}
	})
}
