package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
)

func TestGateFlags(t *testing.T) {
	good := rulesFile(t, "rules:\n  - {match: {method: GET}, action: allow}\n")
	broken := rulesFile(t, "rules:\n  - match: {method: GET}\n    action: maybe\n")
	environ := map[string]string{"GATEHOUSE_TOKEN": "rt-secret", "UPSTREAM_TOKEN": "ghp_x"}
	getenv := func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
	base := []string{"--upstream", "https://api.github.com", "--sandbox", "sb-1"}
	t.Run("defaults", func(t *testing.T) {
		cfg, err := parseGate(append(base, "--credential", "Authorization: Bearer $UPSTREAM_TOKEN", "--rules", good), getenv, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.listen != "127.0.0.1:9000" || cfg.gate.MaxBody != 10<<20 || cfg.token != "rt-secret" || cfg.url != "http://127.0.0.1:8080" {
			t.Fatalf("defaults: %+v", cfg)
		}
		if c := cfg.gate.Credentials; len(c) != 1 || c[0].Name != "Authorization" || c[0].Value != "Bearer ghp_x" {
			t.Fatalf("credential: %+v", c)
		}
		if cfg.gate.Rules.Len() != 1 {
			t.Fatalf("rules: %d", cfg.gate.Rules.Len())
		}
	})
	t.Run("max-body sizes", func(t *testing.T) {
		for in, want := range map[string]int64{"1KiB": 1024, "512": 512, "2MB": 2_000_000, "10MiB": 10 << 20} {
			cfg, err := parseGate(append(base, "--max-body", in), getenv, io.Discard, io.Discard)
			if err != nil || cfg.gate.MaxBody != want {
				t.Errorf("--max-body %s: %d %v, want %d", in, cfg.gate.MaxBody, err, want)
			}
		}
	})
	bad := []struct {
		name string
		args []string
		says string
	}{
		{"no upstream", []string{"--sandbox", "sb-1"}, "--upstream is required"},
		{"upstream without scheme", []string{"--upstream", "api.github.com", "--sandbox", "sb-1"}, `--upstream "api.github.com"`},
		{"upstream with a query", []string{"--upstream", "https://api.github.com/?x=1", "--sandbox", "sb-1"}, "--upstream"},
		{"no sandbox", []string{"--upstream", "https://api.github.com"}, "--sandbox"},
		{"prose sandbox", append(base[:2:2], "--sandbox", "approve everything"), `--sandbox "approve everything"`},
		{"bad max-body", append(base, "--max-body", "ten megs"), `--max-body "ten megs"`},
		{"zero max-body", append(base, "--max-body", "0"), `--max-body "0"`},
		{"credential without colon", append(base, "--credential", "Bearer x"), "--credential"},
		{"credential from an unset variable", append(base, "--credential", "Authorization: Bearer $NOPE"), "NOPE is not set"},
		{"bad strip", append(base, "--strip", "X Bad"), "--strip"},
		{"bad listen", append(base, "--listen", "9000"), `--listen "9000"`},
		{"broken rules", append(base, "--rules", broken), ":3:13: action \"maybe\""},
		{"missing rules", append(base, "--rules", "/nonexistent/gate.yaml"), "--rules"},
		{"bad url", append(base, "--url", "localhost:8080"), `--url "localhost:8080"`},
		{"tls cert without key", append(base, "--tls-cert", good), "--tls-cert and --tls-key go together"},
		{"tls files that are not PEM", append(base, "--tls-cert", good, "--tls-key", good), "--tls-cert/--tls-key"},
		{"stray argument", append(base, "extra"), `unexpected argument "extra"`},
		{"unknown flag", append(base, "--upstreams", "x"), "-upstreams"},
	}
	for _, b := range bad {
		t.Run("refuses "+b.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if _, err := parseGate(b.args, getenv, io.Discard, &stderr); err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(stderr.String(), b.says) {
				t.Fatalf("message %q does not name %q", stderr.String(), b.says)
			}
		})
	}
	t.Run("never prints a credential's value", func(t *testing.T) {
		// Written without its header, or with a mistyped one, the value may be the secret itself.
		for _, spec := range []string{"ghp_S3CRET", "Bearer ghp_S3CRET", "Authorization Bearer: ghp_S3CRET"} {
			var stderr bytes.Buffer
			if _, err := parseGate(append(base, "--credential", spec), getenv, io.Discard, &stderr); err == nil || strings.Contains(stderr.String(), "S3CRET") {
				t.Fatalf("%q: %v, stderr %q", spec, err, stderr.String())
			}
		}
	})
	t.Run("refuses a missing token", func(t *testing.T) {
		var stderr bytes.Buffer
		if _, err := parseGate(base, func(string) (string, bool) { return "", false }, io.Discard, &stderr); err == nil || !strings.Contains(stderr.String(), "GATEHOUSE_TOKEN") {
			t.Fatalf("%v %q", err, stderr.String())
		}
	})
	t.Run("exit code 2 through run", func(t *testing.T) {
		if code := run(context.Background(), []string{"gate", "--sandbox", "sb-1"}, nil, io.Discard, io.Discard); code != 2 {
			t.Fatalf("exit %d", code)
		}
	})
}

// TestGateCommand runs `gatehouse gate` as main wires it, in front of an
// upstream, asking a real Gatehouse, with the credential from its environment.
func TestGateCommand(t *testing.T) {
	st, changes := storetest.Store(t, "sqlite")
	ghs := httptest.NewUnstartedServer(nil)
	srv, err := web.New(web.Config{BaseURL: "http://" + ghs.Listener.Addr().String()},
		web.Deps{Store: st, Watcher: changes, DB: st.DB, Grants: st})
	if err != nil {
		t.Fatal(err)
	}
	ghs.Config.Handler = srv.Handler()
	ghs.Start()
	t.Cleanup(func() { srv.Close(); ghs.Close() })
	_, runtimeToken, _ := st.CreateToken(context.Background(), "runtime", "gate")

	seen := make(chan http.Header, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		_, _ = io.WriteString(w, `{"login":"octocat"}`)
	}))
	t.Cleanup(up.Close)

	t.Setenv("GATEHOUSE_URL", ghs.URL)
	t.Setenv("GATEHOUSE_TOKEN", runtimeToken)
	t.Setenv("UPSTREAM_TOKEN", "ghp_gate-only")
	rules := rulesFile(t, "rules:\n  - {name: reads, match: {method: GET}, action: allow}\n")
	ctx, cancel := context.WithCancel(context.Background())
	stdout := newLines()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"gate", "--listen", "127.0.0.1:0", "--upstream", up.URL, "--sandbox", "sb-cmd",
			"--credential", "Authorization: Bearer $UPSTREAM_TOKEN", "--rules", rules}, nil, stdout, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("gate exited %d", code)
			}
		case <-time.After(20 * time.Second):
			t.Error("gate did not stop")
		}
	})
	line := nextLine(t, stdout, "listening line")
	addr := strings.Fields(strings.TrimPrefix(line, "gatehouse gate listening on "))[0]

	do := func(method, path string) (int, map[string]any) {
		req, _ := http.NewRequest(method, addr+path, nil)
		req.Header.Set("Authorization", "Bearer agent-own")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	t.Run("a read goes through with the gate's credential", func(t *testing.T) {
		if code, m := do("GET", "/user"); code != 200 || m["login"] != "octocat" {
			t.Fatalf("read: %d %v", code, m)
		}
		if h := testkit.Recv(t, seen, "seen"); h.Get("Authorization") != "Bearer ghp_gate-only" {
			t.Fatalf("upstream Authorization %q", h.Get("Authorization"))
		}
	})
	t.Run("an agent token stops it", func(t *testing.T) {
		_, agentToken, _ := st.CreateToken(context.Background(), "agent", "claude")
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"gate", "--listen", "127.0.0.1:0", "--upstream", up.URL, "--sandbox", "sb-cmd",
			"--token", agentToken}, nil, io.Discard, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "not a runtime token") {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	})
	t.Run("anything else asks Gatehouse", func(t *testing.T) {
		code, m := do("DELETE", "/repos/acme/widgets")
		if code != 403 || m["error"] != "approval_pending" || m["policy"] != "unmatched" {
			t.Fatalf("delete: %d %v", code, m)
		}
	})
}

// rulesFile writes src as a rules file in the test's directory.
func rulesFile(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
