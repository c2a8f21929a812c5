//go:build !agent

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/models"
)

// TestRememberedCommand: remembered list|revoke over the API with an
// operator's token; the agent's own token is refused, and a revoked grant
// approves nothing more.
func TestRememberedCommand(t *testing.T) {
	t.Setenv("GATEHOUSE_DATABASE", "")
	t.Setenv("GATEHOUSE_URL", "")
	t.Setenv("GATEHOUSE_TOKEN", "")
	ts := newTestServer(t)
	ctx := context.Background()
	agent := client.New(ts.URL, ts.Agent)
	file := func() *api.Request {
		r, err := agent.File(ctx, api.NewRequest{Kind: "permission", Title: "Run npm test", Tool: "Bash", Command: "npm test",
			SourceRef: map[string]string{"session": "s1"}, Options: []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := file()
	once := "once"
	var got api.Decided
	if err := ts.Operator.Do(ctx, "POST", "/v1/requests/"+r.ID+"/decide", nil,
		api.Decide{Version: &r.Version, Decision: &once, Remember: &api.Remember{Scope: "session", For: "8h"}}, &got); err != nil || got.Remembered == nil {
		t.Fatalf("remember: %v", err)
	}
	id := got.Remembered.ID
	remote := func(args ...string) []string { return append(args, "--url", ts.URL, "--token", ts.Operator.Token) }

	t.Run("list shows the live grant with its match, scope and uses", func(t *testing.T) {
		code, out, stderr := gatehouse(t, remote("remembered", "list")...)
		if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, `^npm test$`) || !strings.Contains(out, "session s1") || !strings.Contains(out, "operator:alice") {
			t.Fatalf("exit %d %q %q", code, out, stderr)
		}
	})
	t.Run("the agent's token can neither list nor revoke", func(t *testing.T) {
		for _, args := range [][]string{{"remembered", "list"}, {"remembered", "revoke", id}} {
			code, out, stderr := gatehouse(t, append(args, "--url", ts.URL, "--token", ts.Agent)...)
			if code != 1 || out != "" || !strings.Contains(stderr, "403 forbidden") {
				t.Fatalf("%v: exit %d %q %q", args, code, out, stderr)
			}
		}
		if later := file(); later.Status != "resolved" {
			t.Fatal("the grant stopped working")
		}
	})
	t.Run("revoke ends it; an unknown id is an error", func(t *testing.T) {
		code, out, stderr := gatehouse(t, remote("remembered", "revoke", id)...)
		if code != 0 || !strings.Contains(out, "revoked "+id) || !strings.Contains(out, "uses so far: 1") {
			t.Fatalf("exit %d %q %q", code, out, stderr)
		}
		if later := file(); later.Status != "open" {
			t.Fatal("a revoked grant still approves")
		}
		if code, out, _ := gatehouse(t, remote("remembered", "list")...); code != 0 || strings.Contains(out, id) {
			t.Fatalf("list still shows it: %q", out)
		}
		if code, out, _ := gatehouse(t, remote("remembered", "list", "--all")...); code != 0 || !strings.Contains(out, "revoked") {
			t.Fatalf("list --all: %q", out)
		}
		if code, _, stderr := gatehouse(t, remote("remembered", "revoke", "rem_nope")...); code != 1 || !strings.Contains(stderr, "404") {
			t.Fatalf("unknown: exit %d %q", code, stderr)
		}
	})
	t.Run("token revoke ends the grants the token made", func(t *testing.T) {
		_, secret, err := ts.Store.CreateToken(ctx, models.RoleOperator, "leaked")
		if err != nil {
			t.Fatal(err)
		}
		fileMake := func() *api.Request {
			r, err := agent.File(ctx, api.NewRequest{Kind: "permission", Title: "Run make installer", Tool: "Bash", Command: "make installer",
				Options: []api.Option{{ID: "once", Label: "Allow once", Effect: "allow"}}}, "")
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		r := fileMake()
		var made api.Decided
		if err := client.New(ts.URL, secret).Do(ctx, "POST", "/v1/requests/"+r.ID+"/decide", nil,
			api.Decide{Version: &r.Version, Decision: &once, Remember: &api.Remember{Scope: "runtime", For: "until_revoked"}}, &made); err != nil || made.Remembered == nil {
			t.Fatalf("remember: %v", err)
		}
		if later := fileMake(); later.Status != "resolved" {
			t.Fatal("the grant does not approve")
		}
		if code, out, stderr := gatehouse(t, remote("token", "revoke", "leaked")...); code != 0 {
			t.Fatalf("token revoke: exit %d %q %q", code, out, stderr)
		}
		if later := fileMake(); later.Status != "open" {
			t.Fatal("a grant made by a revoked token still approves")
		}
		if code, out, _ := gatehouse(t, remote("remembered", "list")...); code != 0 || strings.Contains(out, made.Remembered.ID) {
			t.Fatalf("list still shows it: %q", out)
		}
	})
	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{"remembered"}, {"remembered", "forget"}, {"remembered", "revoke"}, {"remembered", "list", "x"}} {
			if code, _, _ := gatehouse(t, args...); code != 2 {
				t.Errorf("%v: exit %d", args, code)
			}
		}
	})
}
