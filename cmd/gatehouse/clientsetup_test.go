package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
)

// runClient runs a command and returns its exit code and stderr (both builds).
func runClient(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, nil, &out, &errb)
	return code, errb.String()
}

// A client command with no settings names them, instead of "connection
// refused" from a default address.
func TestClientSettingsNamed(t *testing.T) {
	t.Setenv("GATEHOUSE_URL", "")
	t.Setenv("GATEHOUSE_TOKEN", "")
	t.Run("ask with no token names GATEHOUSE_TOKEN and GATEHOUSE_URL", func(t *testing.T) {
		code, stderr := runClient(t, "ask", "--title", "Deploy")
		if code != exitError || !strings.Contains(stderr, "set GATEHOUSE_TOKEN (or pass --token)") || !strings.Contains(stderr, "GATEHOUSE_URL") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("ask with no server there names GATEHOUSE_URL", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		code, stderr := runClient(t, "ask", "--title", "Deploy", "--url", url, "--token", "gh_x")
		if code != exitError || !strings.Contains(stderr, "no Gatehouse server answers at "+url+" (GATEHOUSE_URL or --url") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("acp with no token names GATEHOUSE_TOKEN, and the editor alone decides", func(t *testing.T) {
		var errb bytes.Buffer
		code := run(context.Background(), []string{"acp", "--", "sh", "-c", "exit 5"}, strings.NewReader(""), io.Discard, &errb)
		if code != 5 || !strings.Contains(errb.String(), "set GATEHOUSE_TOKEN") || !strings.Contains(errb.String(), "the editor alone decides") {
			t.Fatalf("exit %d, stderr %q; want the agent's 5 and the settings named", code, errb.String())
		}
	})
}
