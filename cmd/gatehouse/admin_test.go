//go:build !agent

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestAdminOverHTTP: token, session and audit commands act through the
// server's API with an operator's token, so the machine that runs agents
// needs no database file, and an agent's token can do none of it.
func TestAdminOverHTTP(t *testing.T) {
	// The machine's own settings must not pick the target for these runs.
	t.Setenv("GATEHOUSE_DATABASE", "")
	t.Setenv("GATEHOUSE_URL", "")
	t.Setenv("GATEHOUSE_TOKEN", "")
	ts := newTestServer(t)
	op := ts.Operator.Token
	remote := func(args ...string) []string { return append(args, "--url", ts.URL, "--token", op) }
	ctx := context.Background()

	var secret string
	t.Run("token create prints the token alone on stdout, and it works", func(t *testing.T) {
		code, out, stderr := gatehouse(t, remote("token", "create", "--role", "agent", "--name", "deploy-bot")...)
		secret = strings.TrimSuffix(out, "\n")
		if code != 0 || !strings.HasPrefix(secret, "gh_") || strings.ContainsAny(secret, " \n") || stderr != "" {
			t.Fatalf("exit %d stdout %q stderr %q", code, out, stderr)
		}
		if _, err := client.New(ts.URL, secret).File(ctx, api.NewRequest{Title: "Deploy",
			Options: []api.Option{{ID: "allow", Label: "Allow", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}}, ""); err != nil {
			t.Fatalf("the new token cannot file: %v", err)
		}
		rows, err := ts.Store.AuditEntries(ctx, 0, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range rows {
			found = found || (r.Action == store.ActionTokenCreate && r.Actor == "operator:alice" && strings.Contains(r.Detail, `"deploy-bot"`))
		}
		if !found {
			t.Fatal("no token_create entry by operator:alice in the chain")
		}
	})

	t.Run("GATEHOUSE_URL and GATEHOUSE_TOKEN pick the server", func(t *testing.T) {
		t.Setenv("GATEHOUSE_URL", ts.URL)
		t.Setenv("GATEHOUSE_TOKEN", op)
		code, out, stderr := gatehouse(t, "token", "list")
		if code != 0 || !strings.Contains(out, "deploy-bot") || strings.Contains(out, secret) {
			t.Fatalf("list: exit %d %s %s", code, out, stderr)
		}
	})

	t.Run("an agent's token administers nothing and is told what to use", func(t *testing.T) {
		for _, args := range [][]string{
			{"token", "create", "--role", "operator", "--name", "mallory"},
			{"token", "list"}, {"token", "revoke", "alice"}, {"session", "list"}, {"audit", "export"}, {"audit", "verify"},
		} {
			code, out, stderr := gatehouse(t, append(args, "--url", ts.URL, "--token", ts.Agent)...)
			if code != 1 || out != "" || !strings.Contains(stderr, "403 forbidden") || !strings.Contains(stderr, "needs an operator token") {
				t.Fatalf("%v as the agent: exit %d stdout %q stderr %q", args, code, out, stderr)
			}
		}
	})

	t.Run("an operator token says the login URL is dead and how to log in", func(t *testing.T) {
		code, out, stderr := gatehouse(t, remote("token", "create", "--role", "operator", "--name", "bob")...)
		if code != 0 || !strings.HasPrefix(out, "gh_") {
			t.Fatalf("exit %d stdout %q", code, out)
		}
		if !strings.Contains(stderr, "login URL serve printed no longer works") || !strings.Contains(stderr, ts.URL+"/login") ||
			!strings.Contains(stderr, "token field") {
			t.Fatalf("stderr %q", stderr)
		}
	})

	t.Run("sessions are listed and ended", func(t *testing.T) {
		sess, _, err := ts.Store.LoginWithToken(ctx, op)
		if err != nil {
			t.Fatal(err)
		}
		if code, out, stderr := gatehouse(t, remote("session", "list")...); code != 0 || !strings.Contains(out, sess.ID) {
			t.Fatalf("list: exit %d %s %s", code, out, stderr)
		}
		if code, out, stderr := gatehouse(t, remote("session", "revoke", sess.ID)...); code != 0 || out != "ended session "+sess.ID+"\n" {
			t.Fatalf("revoke: exit %d %q %s", code, out, stderr)
		}
		if code, out, _ := gatehouse(t, remote("session", "list")...); code != 0 || strings.Contains(out, sess.ID) {
			t.Fatalf("the ended session is still listed: exit %d %s", code, out)
		}
	})

	t.Run("the audit chain is exported and verified", func(t *testing.T) {
		on1 := storetest.AppendOnChain(t, ts.Store, 1, "req_on1") // as another replica's batch writes it
		code, export, stderr := gatehouse(t, remote("audit", "export")...)
		lines := strings.Split(strings.TrimSpace(export), "\n")
		if code != 0 || len(lines) < 3 || !strings.Contains(export, on1.Hash) {
			t.Fatalf("export: exit %d %q %s", code, export, stderr)
		}
		var last store.AuditEntry
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
			t.Fatal(err)
		}
		head, err := ts.Store.AuditHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(head)
		code, out, stderr := gatehouse(t, remote("audit", "verify", "--head", writeFile(t, "head.json", string(b)))...)
		if code != 0 || !strings.HasPrefix(out, "ok: ") || !strings.Contains(out, "on 2 chains") || !strings.Contains(out, last.Hash) {
			t.Fatalf("verify: exit %d %q %s", code, out, stderr)
		}
		if err := ts.Store.DB.Exec("DELETE FROM audits WHERE chain = 1").Error; err != nil {
			t.Fatal(err)
		}
		code, _, stderr = gatehouse(t, remote("audit", "verify")...)
		if code != 1 || !strings.Contains(stderr, "broken at chain 1 seq 1:") {
			t.Fatalf("chain 1 emptied behind the server's head: exit %d %s", code, stderr)
		}
	})

	t.Run("rules list reads the server's rules with an operator token only", func(t *testing.T) {
		if code, out, stderr := gatehouse(t, remote("rules", "list")...); code != 0 || !strings.Contains(out, "no rules file") {
			t.Fatalf("exit %d %q %s", code, out, stderr)
		}
		if code, _, stderr := gatehouse(t, "rules", "list", "--url", ts.URL, "--token", ts.Agent); code != 1 || !strings.Contains(stderr, "403") {
			t.Fatalf("as the agent: exit %d %s", code, stderr)
		}
	})

	t.Run("token revoke by name", func(t *testing.T) {
		if code, out, stderr := gatehouse(t, remote("token", "revoke", "deploy-bot")...); code != 0 || out != "revoked 1 token(s)\n" {
			t.Fatalf("exit %d %q %s", code, out, stderr)
		}
		if _, err := client.New(ts.URL, secret).Get(ctx, "req_x"); err == nil || err.(*client.Error).Status != 401 {
			t.Fatalf("a revoked token: %v, want 401", err)
		}
	})

	t.Run("--database with --url, or --create with --url, is refused", func(t *testing.T) {
		for _, args := range [][]string{
			remote("token", "list", "--database", "sqlite:x.db"),
			remote("token", "create", "--role", "agent", "--name", "n", "--create"),
		} {
			if code, _, _ := gatehouse(t, args...); code != 2 {
				t.Fatalf("%v: exit %d, want 2", args, code)
			}
		}
	})
}

// TestTokenDatabaseAudited: a token made or revoked through the database file
// is in the audit chain too, as made by the command line.
func TestTokenDatabaseAudited(t *testing.T) {
	t.Setenv("GATEHOUSE_URL", "")
	t.Setenv("GATEHOUSE_TOKEN", "")
	url := storetest.URL(t, "sqlite")
	if code, out, stderr := gatehouse(t, "token", "create", "--role", "operator", "--name", "root", "--database", url, "--create"); code != 0 ||
		!strings.Contains(stderr, "no longer works") || !strings.Contains(stderr, "/login") {
		t.Fatalf("create: exit %d %q %q", code, out, stderr)
	}
	if code, _, stderr := gatehouse(t, "token", "revoke", "root", "--database", url); code != 0 {
		t.Fatalf("revoke: exit %d %s", code, stderr)
	}
	st, closeDB, err := openStore(url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	rows, err := st.AuditEntries(context.Background(), 0, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Action != store.ActionTokenCreate || rows[1].Action != store.ActionTokenRevoke ||
		!strings.HasPrefix(rows[0].Actor, "cli") || rows[0].Via != store.ViaCLI {
		t.Fatalf("entries %+v", rows)
	}
}
