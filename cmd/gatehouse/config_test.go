//go:build !agent

package main

import (
	"bytes"
	"context"
	"errors"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runErr runs a command and returns its exit code and stderr.
func runErr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, nil, &out, &errb)
	return code, errb.String()
}

func TestStrictConfiguration(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "g.db")
	for _, c := range []struct {
		name, env, value string
		args             []string
		want             string
	}{
		{"a bad whole number in the environment", "GATEHOUSE_MAX_WAITERS", "abc", nil, `GATEHOUSE_MAX_WAITERS="abc" is not a whole number`},
		{"a bad duration in the environment", "GATEHOUSE_DEFAULT_EXPIRY", "soon", nil, `GATEHOUSE_DEFAULT_EXPIRY="soon" is not a duration`},
		{"a bad flag value", "", "", []string{"--max-waiters", "abc"}, `invalid value "abc" for flag -max-waiters`},
		{"a bad duration flag", "", "", []string{"--max-expiry", "forever"}, `invalid value "forever" for flag -max-expiry: want a duration, a number with a unit: 90s, 15m, 1h, 168h`},
		{"a bad number flag", "", "", []string{"--filing-rate", "fast"}, `invalid value "fast" for flag -filing-rate: want a number`},
		{"a zero cap", "", "", []string{"--max-waiters", "0"}, "--max-waiters must be above zero"},
		{"a bad suggestion count", "GATEHOUSE_SUGGEST_AFTER", "often", nil, `GATEHOUSE_SUGGEST_AFTER="often" is not a whole number`},
		{"a zero suggestion count", "", "", []string{"--suggest-after", "0"}, "--suggest-after must be above zero"},
		{"a bad attention grace in the environment", "GATEHOUSE_ATTENTION_GRACE", "later", nil, `GATEHOUSE_ATTENTION_GRACE="later" is not a duration`},
		{"no attention grace", "", "", []string{"--attention-grace", "0s"}, "--attention-grace must be above zero"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(c.env, c.value)
			}
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database", db}, c.args...)
			code, stderr := runErr(t, args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
		})
	}

	t.Run("-h prints the usage whatever the environment holds", func(t *testing.T) {
		t.Setenv("GATEHOUSE_MAX_WAITERS", "abc")
		t.Setenv("GATEHOUSE_REVIEWER_TIMEOUT", "soon")
		for _, args := range [][]string{{"serve", "-h"}, {"reviewer", "eval", "--help"}} {
			var out, errb bytes.Buffer
			code := run(context.Background(), args, nil, &out, &errb)
			if code != 0 || !strings.Contains(out.String(), "Usage") || errb.Len() != 0 {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want 0 and the usage alone", args, code, out.String(), errb.String())
			}
		}
	})

	t.Run("the suggestion count reaches the service, from the flag or the environment", func(t *testing.T) {
		t.Setenv("GATEHOUSE_SUGGEST_AFTER", "5")
		for _, c := range []struct {
			args []string
			want int
		}{{nil, 5}, {[]string{"--suggest-after", "7"}, 7}} {
			cfg, err := parseServe(c.args, io.Discard, io.Discard)
			if err != nil || cfg.SuggestAfter != c.want {
				t.Fatalf("%v: %d %v", c.args, cfg.SuggestAfter, err)
			}
		}
	})

	t.Run("an unknown database scheme", func(t *testing.T) {
		code, stderr := runErr(t, "serve", "--addr", "127.0.0.1:0", "--database", "mysql://db/gatehouse")
		if code != 2 || !strings.Contains(stderr, "unknown scheme; use sqlite:PATH") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("a missing directory", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope", "g.db")
		code, stderr := runErr(t, "token", "create", "--role", "operator", "--name", "o", "--database", "sqlite:"+missing, "--create=false")
		if code != 1 || !strings.Contains(stderr, "no database at "+missing) {
			t.Fatalf("without --create: exit %d, stderr %q", code, stderr)
		}
		code, stderr = runErr(t, "serve", "--addr", "127.0.0.1:0", "--database", "sqlite:"+missing)
		if code != 1 || !strings.Contains(stderr, "directory "+filepath.Dir(missing)+" does not exist") || strings.Contains(stderr, "out of memory") {
			t.Fatalf("serve: exit %d, stderr %q", code, stderr)
		}
	})
}

func TestDefaultDatabase(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("GATEHOUSE_DATABASE", "")
	path := filepath.Join(data, "gatehouse", "gatehouse.db")
	// Another working directory must not matter.
	t.Chdir(t.TempDir())

	t.Run("is in the user's data directory", func(t *testing.T) {
		if got := defaultDatabase(); got != "sqlite:"+path {
			t.Fatalf("default %q, want sqlite:%s", got, path)
		}
	})
	t.Run("other commands refuse to create it", func(t *testing.T) {
		code, stderr := runErr(t, "token", "create", "--role", "operator", "--name", "o")
		if code != 1 || !strings.Contains(stderr, "no database at "+path) || !strings.Contains(stderr, "--create") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a database was made: %v", err)
		}
	})
	t.Run("serve creates it and says where", func(t *testing.T) {
		out, errs := newLines(), newLines()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, nil, out, io.MultiWriter(errs)) }()
		if line := nextLine(t, errs, "database line"); !strings.Contains(line, "database sqlite:"+path) {
			t.Fatalf("first stderr line %q, want the database path", line)
		}
		nextLine(t, out, "listening line")
		cancel()
		if code := testkit.Recv(t, done, "the call to end"); code != 0 {
			t.Fatalf("serve exited %d", code)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("serve made no database: %v", err)
		}
	})
	t.Run("then other commands use it", func(t *testing.T) {
		if code, stderr := runErr(t, "token", "create", "--role", "operator", "--name", "o"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
	t.Run("--create makes one elsewhere", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "sub", "g.db")
		if code, stderr := runErr(t, "token", "create", "--role", "operator", "--name", "o", "--database", "sqlite:"+other, "--create"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if _, err := os.Stat(other); err != nil {
			t.Fatal(err)
		}
	})
}

// Each start-up error names what to change, and leaves no database behind.
func TestServeErrorsSayWhatToChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.db")
	noDatabase := func(t *testing.T) {
		t.Helper()
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a database was left behind: %v", err)
		}
	}
	t.Run("a busy port names --addr", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		code, stderr := runErr(t, "serve", "--addr", ln.Addr().String(), "--database", "sqlite:"+path)
		if code != 1 || !strings.Contains(stderr, "cannot listen on "+ln.Addr().String()) || !strings.Contains(stderr, "--addr HOST:PORT or GATEHOUSE_ADDR") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		noDatabase(t)
	})
	t.Run("a bad .p8 names the file and the variable", func(t *testing.T) {
		key := filepath.Join(dir, "AuthKey.p8")
		if err := os.WriteFile(key, []byte("not a key"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GATEHOUSE_APNS_KEY_FILE", key)
		t.Setenv("GATEHOUSE_APNS_KEY_ID", "ABC123")
		t.Setenv("GATEHOUSE_APNS_TEAM_ID", "TEAM")
		t.Setenv("GATEHOUSE_APNS_TOPIC", "app.example")
		code, stderr := runErr(t, "serve", "--addr", "127.0.0.1:0", "--database", "sqlite:"+path)
		if code != 1 || !strings.Contains(stderr, "GATEHOUSE_APNS_KEY_FILE="+key) || !strings.Contains(stderr, "AuthKey_ABC123.p8") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		noDatabase(t)
	})
	t.Run("a bare path names the sqlite: form", func(t *testing.T) {
		code, stderr := runErr(t, "serve", "--addr", "127.0.0.1:0", "--database", path)
		if code != 2 || !strings.Contains(stderr, "write sqlite:"+path) || !strings.Contains(stderr, "postgres://") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		noDatabase(t)
	})
	t.Run("a bare path is refused by the other commands too", func(t *testing.T) {
		code, stderr := runErr(t, "token", "create", "--role", "operator", "--name", "o", "--database", path, "--create")
		if code != 1 || !strings.Contains(stderr, "write sqlite:"+path) {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		noDatabase(t)
	})
}
