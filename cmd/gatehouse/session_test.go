//go:build !agent

package main

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models/store"
)

var sessionID = regexp.MustCompile(`ses_[0-9a-f]+`)

// TestSessionCLI: `gatehouse session list|revoke` beside a running server; a
// revoked session's cookie is refused on its next call.
func TestSessionCLI(t *testing.T) {
	base, login, database := startServe(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := func() int {
		t.Helper()
		resp, err := c.Get(base + "/v1/requests")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	resp, err := c.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := call(); got != http.StatusOK { // twice: the second from the server's cache
		t.Fatalf("the session's call: %d", got)
	}
	call()

	t.Run("list shows the session by id, never its cookie", func(t *testing.T) {
		code, out := runCmd(t, "session", "list", "--database", database)
		u, _ := http.NewRequest(http.MethodGet, base, nil)
		for _, ck := range jar.Cookies(u.URL) {
			if strings.Contains(out, ck.Value) {
				t.Fatalf("the list shows the cookie: %s", out)
			}
		}
		if code != 0 || !strings.Contains(out, store.FirstOperator) || !sessionID.MatchString(out) {
			t.Fatalf("list: %d %s", code, out)
		}
	})

	t.Run("revoke ends it at once", func(t *testing.T) {
		_, out := runCmd(t, "session", "list", "--database", database)
		id := sessionID.FindString(out)
		if code, _ := runCmd(t, "session", "revoke", id, "--database", database); code != 0 {
			t.Fatalf("revoke: %d", code)
		}
		if got := call(); got != http.StatusUnauthorized {
			t.Fatalf("the revoked session's call: %d, want 401", got)
		}
		if code, _ := runCmd(t, "session", "revoke", id, "--database", database); code != 1 {
			t.Fatalf("revoking it again: %d, want 1", code)
		}
		st, closeDB, err := openStore(database, false)
		if err != nil {
			t.Fatal(err)
		}
		defer closeDB()
		rows, err := st.AuditEntries(context.Background(), 0, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range rows {
			if a.Action == store.ActionSessionRevoke && strings.HasPrefix(a.Actor, "cli") && a.Via == store.ViaCLI && strings.Contains(a.Detail, id) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d session_revoke entries by the command line in %+v", n, rows)
		}
	})

	t.Run("a database that does not exist is not created", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "none.db")
		if code, _ := runCmd(t, "session", "list", "--database", "sqlite:"+path); code == 0 {
			t.Fatal("listed a database that does not exist")
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("the database was created: %v", err)
		}
	})
}
