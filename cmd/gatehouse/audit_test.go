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

// The commands over a trail on several chains: 5 entries on chain 0, 3 on
// chain 2.
func TestAuditCommandsChains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		url, st := auditDB(t, dialect, 5)
		var on2 []store.AuditEntry
		for range 3 {
			on2 = append(on2, storetest.AppendOnChain(t, st, 2, "req_on2"))
		}
		key, err := st.SigningKey(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pub := base64.StdEncoding.EncodeToString(key.Public)
		headFile, head := savedHead(t, st)
		if head.Chains[2].Seq != 3 || head.Chains[2].Hash != on2[2].Hash {
			t.Fatalf("head %+v", head.Chains)
		}
		want := fmt.Sprintf("ok: 8 entries on 2 chains\nchain 0: head 5 %s\nchain 2: head 3 %s\n", head.Chains[0].Hash, on2[2].Hash)

		code, export, stderr := gatehouse(t, "audit", "export", "--database", url)
		if code != 0 || strings.Count(export, "\n") != 8 || strings.Count(export, `{"chain":2,`) != 3 {
			t.Fatalf("export: %d %q %s", code, export, stderr)
		}
		exportFile := writeFile(t, "audit.jsonl", export)

		t.Run("the database and the export verify every chain", func(t *testing.T) {
			for _, args := range [][]string{{"--database", url}, {"--database", url, "--head", headFile}, {"--file", exportFile, "--key", pub, "--head", headFile}} {
				code, out, stderr := gatehouse(t, append([]string{"audit", "verify"}, args...)...)
				if code != 0 || out != want {
					t.Fatalf("verify %v: %d %q %s, want %q", args, code, out, stderr, want)
				}
			}
		})

		t.Run("export --chain gives one chain, --after its rest", func(t *testing.T) {
			code, out, _ := gatehouse(t, "audit", "export", "--database", url, "--chain", "2")
			if code != 0 || strings.Count(out, "\n") != 3 || strings.Count(out, `{"chain":2,`) != 3 {
				t.Fatalf("export --chain 2: %d %q", code, out)
			}
			code, out, _ = gatehouse(t, "audit", "export", "--database", url, "--chain", "2", "--after", "2")
			if code != 0 || strings.TrimSpace(out) != strings.TrimSpace(strings.SplitAfter(export, "\n")[7]) {
				t.Fatalf("export --chain 2 --after 2: %d %q", code, out)
			}
		})

		t.Run("an edited export is named by chain and seq", func(t *testing.T) {
			lines := strings.SplitAfter(export, "\n") // lines[5:8] are chain 2's
			join := func(ls ...string) string { return strings.Join(ls, "") }
			cases := map[string]struct{ file, where string }{
				"changed":   {join(join(lines[:6]...), strings.Replace(lines[6], `"system"`, `"operator:o"`, 1), lines[7]), "chain 2 seq 2"},
				"deleted":   {join(join(lines[:6]...), lines[7]), "chain 2 seq 2"},
				"reordered": {join(join(lines[:5]...), lines[6], lines[5], lines[7]), "chain 2 seq 1"},
				"moved to chain 1": {join(join(lines[:7]...), strings.Replace(strings.Replace(lines[7], `"chain":2`, `"chain":1`, 1), `"seq":3`, `"seq":1`, 1)),
					"chain 1 seq 1"},
				"interleaved":     {join(lines[5], lines[0], lines[6], lines[1], lines[2], lines[7], join(lines[3:5]...)), ""},
				"chain 2 cut off": {join(lines[:6]...), "chain 2 seq 2"},
			}
			for name, c := range cases {
				args := []string{"audit", "verify", "--file", writeFile(t, "bad.jsonl", c.file), "--key", pub, "--head", headFile}
				code, out, stderr := gatehouse(t, args...)
				if c.where == "" {
					if code != 0 || out != want {
						t.Fatalf("%s: %d %q %s, want it to verify", name, code, out, stderr)
					}
					continue
				}
				if code != 1 || !strings.Contains(stderr, "broken at "+c.where+":") {
					t.Fatalf("%s: %d %s, want exit 1 naming %s", name, code, stderr, c.where)
				}
			}
		})

		t.Run("one chain cut off in the database is caught by the saved head", func(t *testing.T) {
			if err := st.DB.Exec("DELETE FROM audits WHERE chain = 2 AND seq = 3").Error; err != nil {
				t.Fatal(err)
			}
			if err := st.DB.Exec("UPDATE audit_head SET seq = 2, hash = ?, at = ? WHERE id = 3", on2[1].Hash, on2[1].At).Error; err != nil {
				t.Fatal(err)
			}
			if code, out, stderr := gatehouse(t, "audit", "verify", "--database", url); code != 0 {
				t.Fatalf("without the saved head: %d %q %s, want the shortened chain to look whole", code, out, stderr)
			}
			code, _, stderr := gatehouse(t, "audit", "verify", "--database", url, "--head", headFile)
			if code != 1 || !strings.Contains(stderr, "broken at chain 2 seq 3:") || !strings.Contains(stderr, "cut off") {
				t.Fatalf("cut off: %d %s", code, stderr)
			}
		})
	})

	t.Run("a database from the one-chain build verifies against its old head once migrated", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join("..", "..", "models", "store", "testdata", "audit-one-chain.sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(t.TempDir(), "gatehouse.db")
		if err := os.WriteFile(db, b, 0o600); err != nil {
			t.Fatal(err)
		}
		oldHead := filepath.Join("..", "..", "models", "store", "testdata", "audit-one-chain.sqlite.head.json")
		code, _, stderr := gatehouse(t, "audit", "verify", "--database", "sqlite:"+db)
		if code != 1 || !strings.Contains(stderr, "migrate") {
			t.Fatalf("before migration: %d %s, want it told to migrate", code, stderr)
		}
		_, closeDB, err := openStore("sqlite:"+db, true)
		if err != nil {
			t.Fatal(err)
		}
		closeDB()
		code, out, stderr := gatehouse(t, "audit", "verify", "--database", "sqlite:"+db, "--head", oldHead)
		if code != 0 || !strings.HasPrefix(out, "ok: 10 entries, head 10 ") {
			t.Fatalf("after migration: %d %q %s", code, out, stderr)
		}
	})
}
