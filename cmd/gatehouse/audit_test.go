//go:build !agent

package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// auditDB returns the URL of a migrated database whose chain holds n entries,
// and its store.
func auditDB(t *testing.T, dialect string, n int) (string, *store.Store) {
	t.Helper()
	url := storetest.URL(t, dialect)
	st, closeDB, err := openStore(url, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeDB)
	p := models.Principal{ID: "tok_a", Role: models.RoleAgent, Name: "a"}
	for i := 0; i < n; i++ {
		opts := []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}
		if _, _, err := st.CreateRequest(context.Background(), p, models.NewRequest{Kind: models.KindPermission, Title: fmt.Sprintf("step %d", i), Options: opts}, ""); err != nil {
			t.Fatal(err)
		}
	}
	return url, st
}

func gatehouse(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func savedHead(t *testing.T, st *store.Store) (string, *store.SignedHead) {
	t.Helper()
	h, err := st.AuditHead(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(h)
	return writeFile(t, "head.json", string(b)), h
}

func TestAuditCommands(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		url, st := auditDB(t, dialect, 5)
		key, err := st.SigningKey(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pub := base64.StdEncoding.EncodeToString(key.Public)
		headFile, head := savedHead(t, st)
		want := fmt.Sprintf("ok: 5 entries, head 5 %s\n", head.Chains[0].Hash)

		code, export, stderr := gatehouse(t, "audit", "export", "--database", url)
		if code != 0 || strings.Count(export, "\n") != 5 {
			t.Fatalf("export: %d %q %s", code, export, stderr)
		}
		exportFile := writeFile(t, "audit.jsonl", export)

		t.Run("the database verifies, with and without a saved head", func(t *testing.T) {
			for _, args := range [][]string{{"--database", url}, {"--database", url, "--head", headFile}, {"--database", url, "--head", headFile, "--key", pub}} {
				code, out, stderr := gatehouse(t, append([]string{"audit", "verify"}, args...)...)
				if code != 0 || out != want {
					t.Fatalf("verify %v: %d %q %s, want %q", args, code, out, stderr, want)
				}
			}
		})

		t.Run("an export verifies on its own and against the saved head", func(t *testing.T) {
			for _, args := range [][]string{{"--file", exportFile}, {"--file", exportFile, "--key", pub, "--head", headFile}} {
				code, out, stderr := gatehouse(t, append([]string{"audit", "verify"}, args...)...)
				if code != 0 || out != want {
					t.Fatalf("verify %v: %d %q %s, want %q", args, code, out, stderr, want)
				}
			}
		})

		t.Run("export --after gives the rest of the chain", func(t *testing.T) {
			code, out, _ := gatehouse(t, "audit", "export", "--database", url, "--after", "3")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], `{"seq":4,`) {
				t.Fatalf("export --after 3: %d %q", code, out)
			}
		})

		t.Run("a head signed by another key is refused", func(t *testing.T) {
			other, _, _ := ed25519.GenerateKey(rand.Reader)
			code, _, stderr := gatehouse(t, "audit", "verify", "--file", exportFile, "--key", base64.StdEncoding.EncodeToString(other), "--head", headFile)
			if code != 1 || !strings.Contains(stderr, "signature") {
				t.Fatalf("another key: %d %s", code, stderr)
			}
			forged := *head
			forged.Chains = append([]store.ChainHead(nil), head.Chains...)
			forged.Chains[0].Seq = 3
			b, _ := json.Marshal(forged)
			code, _, stderr = gatehouse(t, "audit", "verify", "--database", url, "--head", writeFile(t, "forged.json", string(b)))
			if code != 1 || !strings.Contains(stderr, "signature") {
				t.Fatalf("a head edited after signing: %d %s", code, stderr)
			}
		})

		t.Run("an edited export is named by seq", func(t *testing.T) {
			lines := strings.SplitAfter(export, "\n")
			cases := map[string]struct {
				file string
				seq  string
			}{
				"changed":   {strings.Join(lines[:2], "") + strings.Replace(lines[2], `"agent:a"`, `"operator:o"`, 1) + strings.Join(lines[3:], ""), "seq 3"},
				"deleted":   {strings.Join(lines[:3], "") + strings.Join(lines[4:], ""), "seq 4"},
				"reordered": {lines[0] + lines[2] + lines[1] + strings.Join(lines[3:], ""), "seq 2"},
				"appended":  {export + strings.Replace(strings.Replace(lines[4], `"seq":5`, `"seq":6`, 1), `"step 4"`, `"step 5"`, 1), "seq 6"},
				"cut off":   {strings.Join(lines[:3], ""), "seq 4"},
			}
			for name, c := range cases {
				args := []string{"audit", "verify", "--file", writeFile(t, "bad.jsonl", c.file)}
				if name == "cut off" {
					args = append(args, "--key", pub, "--head", headFile)
				}
				code, _, stderr := gatehouse(t, args...)
				if code != 1 || !strings.Contains(stderr, "broken at "+c.seq+":") {
					t.Fatalf("%s: %d %s, want exit 1 naming %s", name, code, stderr, c.seq)
				}
			}
		})

		t.Run("a rewritten database is caught by the saved head", func(t *testing.T) {
			if err := st.DB.Exec("UPDATE audits SET actor = 'agent:b' WHERE seq = 5").Error; err != nil {
				t.Fatal(err)
			}
			code, _, stderr := gatehouse(t, "audit", "verify", "--database", url, "--head", headFile)
			if code != 1 || !strings.Contains(stderr, "broken at seq 5:") {
				t.Fatalf("rewritten: %d %s", code, stderr)
			}
		})
	})

	t.Run("no database is created", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "none.db")
		for _, args := range [][]string{{"audit", "verify", "--database", "sqlite:" + missing}, {"audit", "export", "--database", "sqlite:" + missing}} {
			code, _, stderr := gatehouse(t, args...)
			if code != 1 {
				t.Fatalf("%v: %d %s, want 1", args, code, stderr)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Fatalf("%v made %s", args, missing)
			}
		}
	})

	t.Run("bad flags are usage errors", func(t *testing.T) {
		for _, args := range [][]string{{"audit"}, {"audit", "nope"}, {"audit", "verify", "--database", "x", "--file", "y"}, {"audit", "export", "--after", "-1"}} {
			if code, _, _ := gatehouse(t, args...); code != 2 {
				t.Fatalf("%v: exit %d, want 2", args, code)
			}
		}
	})
}
