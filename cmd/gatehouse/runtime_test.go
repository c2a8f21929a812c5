package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// lines is an io.Writer that hands over each whole line written to it.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	C   chan string
}

func newLines() *lines { return &lines{C: make(chan string, 64)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line) // an unfinished line waits for the rest
			return len(p), nil
		}
		select {
		case l.C <- line:
		default: // nobody reads this far: a log line must never block the server
		}
	}
}

func nextLine(t *testing.T, l *lines, what string) string {
	t.Helper()
	select {
	case s := <-l.C:
		return s
	case <-time.After(20 * time.Second): // a cap, so a hang fails rather than stalls
		t.Fatalf("no %s", what)
		return ""
	}
}

var runtimeID = regexp.MustCompile(`rt_[0-9a-f]+`)

func TestRuntimeCommand(t *testing.T) {
	// The production assembly on a prepared store: its forwarder sends to the
	// runtime's callback.
	s, changes := storetest.Store(t, "sqlite")
	a, err := app.New(app.Config{Store: s, Changes: changes, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := testkit.Recv(t, ran, "ran"); err != nil {
			t.Errorf("run: %v", err)
		}
		a.Close()
	}()
	api := struct{ URL string }{a.URL()}

	tok, secret, err := s.CreateToken(ctx, models.RoleRuntime, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	decide := func(t *testing.T, rid string) string {
		r, _, err := s.CreateRequest(ctx, tok.Principal(), models.NewRequest{Title: "git push", RuntimeID: &rid,
			Options: []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: "api"}); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}

	t.Run("an error exits 1 while the callback is served", func(t *testing.T) {
		stdout, stderr := newLines(), newLines()
		code := make(chan int, 1)
		// A directory is an unreadable cursor file: the pull loop fails at once.
		args := []string{"runtime", "--url", api.URL, "--token", secret, "--name", "broken", "--machine", "m",
			"--callback-listen", "127.0.0.1:0", "--pull", "--cursor-file", t.TempDir()}
		go func() { code <- run(ctx, args, nil, stdout, stderr) }()
		select {
		case c := <-code:
			if c != 1 {
				t.Fatalf("exit code %d, want 1", c)
			}
		case <-time.After(20 * time.Second): // a cap, so a hang fails rather than stalls
			t.Fatal("the runtime hung after an error instead of exiting 1")
		}
		nextLine(t, stderr, "registration line")
		if line := nextLine(t, stderr, "error line"); !strings.Contains(line, "is a directory") {
			t.Fatalf("stderr %q, want the cursor file's error", line)
		}
	})

	for _, mode := range [][]string{{"--callback-listen", "127.0.0.1:0"}, {"--pull"}} {
		t.Run(mode[0], func(t *testing.T) {
			stdout, stderr := newLines(), newLines()
			rctx, stop := context.WithCancel(ctx)
			code := make(chan int, 1)
			args := append([]string{"runtime", "--url", api.URL, "--token", secret, "--name", "n" + mode[0], "--machine", "m"}, mode...)
			go func() { code <- run(rctx, args, nil, stdout, stderr) }()
			rid := runtimeID.FindString(nextLine(t, stderr, "registration line"))
			if rid == "" {
				t.Fatal("the runtime printed no id")
			}
			id := decide(t, rid)
			var got struct {
				Via       string `json:"via"`
				RequestID string `json:"requestId"`
				Version   int    `json:"version"`
				Decision  string `json:"decision"`
			}
			line := nextLine(t, stdout, "decision line")
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			via := map[string]string{"--pull": "pull"}[mode[0]]
			if via == "" {
				via = "callback"
			}
			if got.Via != via || got.RequestID != id || got.Version != 2 || got.Decision != "once" {
				t.Fatalf("printed %s", line)
			}
			stop()
			if c := testkit.Recv(t, code, "code"); c != 0 {
				t.Fatalf("exit code %d", c)
			}
		})
	}
}
