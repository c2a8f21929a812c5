package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const (
	unitPath = "systemd/gatehouse.service"
	envPath  = "systemd/gatehouse.env"
	binPath  = "/usr/local/bin/gatehouse" // the unit's ExecStart program
	dataDir  = "/var/lib/gatehouse"
)

// directive is one Key=Value line of a unit file, with its section.
type directive struct{ section, key, value string }

// readUnit reads a unit file's directives in order (comments and blank lines
// dropped; the unit has no continuation lines).
func readUnit(t *testing.T, path string) []directive {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []directive
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.HasSuffix(line, `\`) {
				t.Fatalf("%s: cannot read %q", path, line)
			}
			out = append(out, directive{section, k, v})
		}
	}
	return out
}

// values returns every value the unit gives key in [Service].
func values(unit []directive, key string) []string {
	var out []string
	for _, d := range unit {
		if d.section == "Service" && d.key == key {
			out = append(out, d.value)
		}
	}
	return out
}

// TestServiceUnit checks deploy/systemd/gatehouse.service: systemd accepts
// every line of it, it keeps the server's files from every other user, and
// `gatehouse serve` starts with the command and settings it gives.
func TestServiceUnit(t *testing.T) {
	unit := readUnit(t, unitPath)
	bin := gatehousetest.Build(t)

	t.Run("systemd-analyze verify", func(t *testing.T) {
		analyze, err := exec.LookPath("systemd-analyze")
		if err != nil {
			testkit.Skipf(t, "systemd-analyze not found (Debian package systemd): the unit file is not verified")
		}
		// verify wants ExecStart's program to exist: the same unit, naming the
		// binary just built.
		b, err := os.ReadFile(unitPath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("ExecStart="+binPath+" ")) {
			t.Fatalf("ExecStart does not run %s", binPath)
		}
		tmp := filepath.Join(t.TempDir(), "gatehouse.service")
		if err := os.WriteFile(tmp, bytes.ReplaceAll(b, []byte(binPath), []byte(bin)), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testkit.CapWait)
		defer cancel()
		// verify exits 0 on an unknown key or a bad value (it ignores the line),
		// so anything it prints is a failure too.
		out, err := exec.CommandContext(ctx, analyze, "verify", tmp).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
		}
	})

	t.Run("keeps the server's files from other users", func(t *testing.T) {
		for _, c := range []struct{ key, want, why string }{
			{"User", "gatehouse", "a user of its own, not root and not the agent's"},
			{"StateDirectory", "gatehouse", "systemd makes " + dataDir + ", owned by that user"},
			{"StateDirectoryMode", "0700", "no other user can open the database"},
			{"UMask", "0077", "every file the server makes is 0600"},
			{"Environment", "GATEHOUSE_DATABASE=sqlite:" + dataDir + "/gatehouse.db", "the database lives in the state directory"},
			{"NoNewPrivileges", "yes", "no setuid way back up"},
			{"CapabilityBoundingSet", "", "no capabilities at all"},
			{"ProtectSystem", "strict", "nothing but the state directory is writable"},
			{"ProtectHome", "yes", "no home directory (and no agent's files) in reach"},
		} {
			t.Run(c.key, func(t *testing.T) {
				vs := values(unit, c.key)
				for _, v := range vs {
					if v == c.want {
						return
					}
				}
				t.Errorf("%s=%s missing (%s); the unit has %q", c.key, c.want, c.why, vs)
			})
		}
	})

	t.Run("serve starts with the unit's command and settings", func(t *testing.T) {
		// The settings as systemd passes them: Environment= lines, then the
		// example environment file (which overrides them), the data directory
		// moved into the test's.
		data := t.TempDir()
		env := values(unit, "Environment")
		b, err := os.ReadFile(envPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
				env = append(env, line)
			}
		}
		var baseURL string
		for _, kv := range env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.ContainsAny(v, `"'$\ `) {
				t.Fatalf("cannot read setting %q", kv)
			}
			if k == "GATEHOUSE_BASE_URL" {
				baseURL = v
			}
			t.Setenv(k, strings.ReplaceAll(v, dataDir, data))
		}
		if baseURL == "" || !strings.HasPrefix(baseURL, "https://") {
			t.Fatalf("%s sets no https GATEHOUSE_BASE_URL (got %q)", envPath, baseURL)
		}
		start := values(unit, "ExecStart")
		if len(start) != 1 {
			t.Fatalf("ExecStart=%q; want one", start)
		}
		argv := strings.Fields(start[0])
		if argv[0] != binPath || len(argv) < 2 || argv[1] != "serve" {
			t.Fatalf("ExecStart=%s; want %s serve …", start[0], binPath)
		}
		// Start adds --addr 127.0.0.1:0 (a free port) and --database (the
		// unit's own, moved); the unit's flags come after them and win.
		s := gatehousetest.Start(t, bin, os.Getenv("GATEHOUSE_DATABASE"), argv[2:]...)
		if got := s.URL(); got != baseURL {
			t.Errorf("serve announced %s; want the base URL %s", got, baseURL)
		}
		if _, err := os.Stat(filepath.Join(data, "gatehouse.db")); err != nil {
			t.Errorf("no database in the data directory: %v", err)
		}
	})
}

// TestDockerfileData checks that the image's data directory, which a new named
// volume copies, is 0700 and the server's (no Docker engine runs the image in
// these tests, so this reads the Dockerfile).
func TestDockerfileData(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"mkdir -m 0700 /out/data",
		"COPY --from=build --chown=nonroot:nonroot /out/data /data",
		"USER nonroot:nonroot",
		"VOLUME /data",
		"GATEHOUSE_DATABASE=sqlite:/data/gatehouse.db",
	} {
		t.Run(want, func(t *testing.T) {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("the Dockerfile has no %q", want)
			}
		})
	}
}
