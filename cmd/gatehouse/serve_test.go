//go:build !agent

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
)

// startServe runs `gatehouse serve` on a free port and a fresh SQLite file and
// returns its URL, the one-time login URL and the database URL. The server
// stops, and must exit 0, when the test ends.
func startServe(t *testing.T) (base, login, database string) {
	t.Helper()
	database = "sqlite:" + t.TempDir() + "/gatehouse.db"
	out := newLines()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database", database}, nil, out, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if code := testkit.Recv(t, done, "the call to end"); code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	base = strings.TrimSpace(strings.TrimPrefix(nextLine(t, out, "listening line"), "gatehouse listening on "))
	nextLine(t, out, "login notice")
	login = strings.TrimSpace(nextLine(t, out, "login URL"))
	return base, login, database
}

func runCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, nil, &out, &errb)
	if code != 0 && errb.Len() > 0 {
		t.Logf("%v: %s", args, errb.String())
	}
	return code, out.String()
}

func TestServe(t *testing.T) {
	base, login, database := startServe(t)

	t.Run("the one-time login URL opens a session once", func(t *testing.T) {
		if !strings.HasPrefix(login, base+"/login?token=") {
			t.Fatalf("login URL %q", login)
		}
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(login)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 || !resp.Cookies()[0].HttpOnly {
			t.Fatalf("%d %v", resp.StatusCode, resp.Cookies())
		}
		resp, err = c.Get(base + "/v1/requests")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("the session cookie did not authenticate: %d", resp.StatusCode)
		}
		resp, err = http.Get(login)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("second use: %d", resp.StatusCode)
		}
	})

	t.Run("tokens are made, listed and revoked beside the running server", func(t *testing.T) {
		code, secret := runCmd(t, "token", "create", "--role", "agent", "--name", "deploy-bot", "--database", database)
		secret = strings.TrimSpace(secret)
		if code != 0 || !strings.HasPrefix(secret, "gh_") || strings.Contains(secret, "\n") {
			t.Fatalf("create: %d %q", code, secret)
		}
		if err := client.New(base, secret).Do(context.Background(), "GET", "/v1/requests", nil, nil, nil); err != nil {
			t.Fatalf("the new token is refused: %v", err)
		}
		code, list := runCmd(t, "token", "list", "--database", database)
		if code != 0 || !strings.Contains(list, "deploy-bot") || strings.Contains(list, secret) {
			t.Fatalf("list: %d %s", code, list)
		}
		if code, _ := runCmd(t, "token", "revoke", "deploy-bot", "--database", database); code != 0 {
			t.Fatalf("revoke: %d", code)
		}
		err := client.New(base, secret).Do(context.Background(), "GET", "/v1/requests", nil, nil, nil)
		if e, ok := err.(*client.Error); !ok || e.Status != 401 {
			t.Fatalf("a revoked token still works: %v", err)
		}
	})

	t.Run("ask exits by the decision's effect", func(t *testing.T) {
		_, agent := runCmd(t, "token", "create", "--role", "agent", "--name", "ci", "--database", database)
		_, op := runCmd(t, "token", "create", "--role", "operator", "--name", "op", "--database", database)
		operator := client.New(base, strings.TrimSpace(op))
		for _, c := range []struct {
			decision string
			want     int
		}{{"allow", exitAllow}, {"deny", exitDeny}} {
			t.Run(c.decision, func(t *testing.T) {
				out, errs := newLines(), newLines()
				done := make(chan int, 1)
				go func() {
					done <- run(context.Background(), []string{"ask", "--url", base, "--token", strings.TrimSpace(agent),
						"--title", "Deploy to production", "--json"}, nil, out, errs)
				}()
				// ask says which request it waits on; decide that one.
				id := requestID.FindString(nextLine(t, errs, "waiting notice"))
				r, err := operator.Get(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := operator.Decide(context.Background(), r.ID, r.Version, c.decision, ""); err != nil {
					t.Fatal(err)
				}
				if code := testkit.Recv(t, done, "the call to end"); code != c.want {
					t.Fatalf("exit %d, want %d", code, c.want)
				}
				var final api.Request
				if err := json.Unmarshal([]byte(strings.Join(drain(out), "")), &final); err != nil || *final.Decision != c.decision {
					t.Fatalf("--json: %v %+v", err, final)
				}
			})
		}
	})
}

var requestID = regexp.MustCompile(`req_[0-9a-f]+`)

func drain(l *lines) []string {
	var out []string
	for {
		select {
		case s := <-l.C:
			out = append(out, s)
		default:
			return out
		}
	}
}
