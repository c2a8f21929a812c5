package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/gatehousehq/gatehouse/client"
)

// runRuntime plays a machine-local runtime: it registers, then receives
// decisions by callback (--callback-listen), by the pull feed (--pull), or both,
// and prints each as one JSON line, so a person can watch the flow end to end.
func runRuntime(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("runtime", stdout, stderr)
	host, _ := os.Hostname()
	serverURL := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "runtime token")
	name := fs.String("name", "", "runtime name (required; registering it again updates it)")
	machine := fs.String("machine", host, "machine the runtime runs on")
	listen := fs.String("callback-listen", "", "serve the signed callback on ADDR (e.g. 127.0.0.1:9090)")
	publicURL := fs.String("callback-url", "", "the callback URL the server should call (default http://ADDR of --callback-listen)")
	pull := fs.Bool("pull", false, "long-poll the decision feed (for runtimes behind NAT)")
	cursorFile := fs.String("cursor-file", "", "with --pull: keep the feed cursor in FILE, to resume after a restart")
	state := fs.String("state", "", "with --callback-listen: keep the replay state (deliveries seen, versions accepted) in FILE, so a forward captured before a restart is still refused after it")
	gone := fs.Bool("gone", false, "answer every forwarded decision 409 (as a runtime that lost its live callback)")
	fs.hide("gone") // a demonstration of a conflict (docs/forwarding.md), not a runtime's setting
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if *name == "" || *token == "" {
		return fs.usageError(2, "--name and --token (or GATEHOUSE_TOKEN) are required")
	}
	if *listen == "" && !*pull {
		*pull = true // a runtime that takes no calls can still pull
	}
	c, err := newClient(*serverURL, *token)
	if err != nil {
		fmt.Fprintln(stderr, "runtime:", err)
		return 2
	}
	out := &lineWriter{w: stdout}

	var ln net.Listener
	reg := api.RuntimeRegistration{Name: *name, Machine: *machine}
	if *listen != "" {
		var err error
		if ln, err = net.Listen("tcp", *listen); err != nil {
			fmt.Fprintln(stderr, "gatehouse runtime:", err)
			return 1
		}
		defer ln.Close()
		reg.CallbackURL = *publicURL
		if reg.CallbackURL == "" {
			reg.CallbackURL = "http://" + ln.Addr().String()
		}
	}
	rt, err := c.RegisterRuntime(ctx, reg)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse runtime: register:", err)
		return 1
	}
	fmt.Fprintf(stderr, "runtime %s registered as %s (callback %q); file requests with \"runtime_id\": %q\n", rt.Name, rt.ID, rt.CallbackURL, rt.ID)

	// Cancelled on the way out, so an error in one part stops the others
	// (the callback server waits for ctx to shut down) and Wait returns.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	if ln != nil {
		keys, err := c.Keys(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse runtime: fetch the server's keys:", err)
			return 1
		}
		h := &client.Handler{Keys: keys, RuntimeID: rt.ID, OnDecision: func(_ context.Context, d api.Decision) error {
			out.print("callback", d)
			if *gone {
				return client.ErrGone
			}
			return nil
		}}
		if *state != "" {
			h.Replay = &client.ReplayFile{Path: *state}
		}
		mux := http.NewServeMux()
		mux.Handle("POST "+api.DecidePath, h)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		wg.Go(func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		})
		wg.Go(func() {
			<-ctx.Done()
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shut)
		})
	}
	if *pull {
		loop := &client.PullLoop{Client: c, RuntimeID: rt.ID, Handle: func(_ context.Context, d api.Decision) error {
			out.print("pull", d)
			return nil
		}}
		if *cursorFile != "" {
			loop.LoadCursor = func(context.Context) (string, error) {
				b, err := os.ReadFile(*cursorFile)
				if errors.Is(err, os.ErrNotExist) {
					return "", nil
				}
				return strings.TrimSpace(string(b)), err
			}
			loop.SaveCursor = func(_ context.Context, cur string) error {
				return os.WriteFile(*cursorFile, []byte(cur+"\n"), 0o600)
			}
		}
		wg.Go(func() {
			if err := loop.Run(ctx); err != nil && ctx.Err() == nil {
				errs <- err
			}
		})
	}
	var code int
	select {
	case <-ctx.Done():
	case err := <-errs:
		fmt.Fprintln(stderr, "gatehouse runtime:", err)
		code = 1
	}
	cancel()
	wg.Wait()
	return code
}

// lineWriter prints one JSON line per decision, whole lines only.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) print(via string, d api.Decision) {
	line := struct {
		Via string `json:"via"`
		api.Decision
	}{via, d}
	b, _ := json.Marshal(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s\n", b)
}
