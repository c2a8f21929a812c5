package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/codexbridge"
)

// runCodexAppServer is `gatehouse codex app-server`: Codex's app-server as a
// child, with every approval it asks for filed in Gatehouse too.
func runCodexAppServer(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("codex app-server", stdout, stderr)
	host, _ := os.Hostname()
	url := fs.String("url", env("GATEHOUSE_URL", "http://127.0.0.1:8080"), "server URL (GATEHOUSE_URL)")
	token := fs.secret("token", "GATEHOUSE_TOKEN", "agent or runtime token")
	codex := fs.String("codex", env("GATEHOUSE_CODEX", "codex"), "the codex program (GATEHOUSE_CODEX)")
	expiry := fs.Duration("timeout", time.Hour, "how long an approval stays open in Gatehouse; the local client can answer it after that too")
	runtime := fs.String("runtime", "", "with --callback-listen: register as this runtime (a runtime token), so decisions are also forwarded and one for a lost approval is a conflict")
	machine := fs.String("machine", host, "the machine the runtime names")
	listen := fs.String("callback-listen", "", "serve the runtime's signed callback on ADDR (e.g. 127.0.0.1:9091)")
	publicURL := fs.String("callback-url", "", "the callback URL the server calls (default http://ADDR of --callback-listen)")
	if err := fs.parse(args); err != nil {
		return exitCode(err, 2)
	}
	if *expiry < time.Second {
		fmt.Fprintln(stderr, "gatehouse codex app-server: --timeout must be at least 1s")
		return 2
	}
	if (*runtime == "") != (*listen == "") {
		fmt.Fprintln(stderr, "gatehouse codex app-server: --runtime and --callback-listen go together")
		return 2
	}
	if err := checkClient(*url, *token); err != nil {
		fmt.Fprintf(stderr, "gatehouse codex app-server: %v; until then Codex's own client alone decides\n", err)
	}
	c := explainedClient(*url, *token)
	b := &codexbridge.Bridge{Gatehouse: c, ExpiresIn: int64((*expiry + time.Second - 1) / time.Second), Log: stderr}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *listen != "" {
		stop, err := serveBridgeCallback(ctx, c, b, *runtime, *machine, *listen, *publicURL, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "gatehouse codex app-server:", err)
			return 1
		}
		defer stop()
	}
	argv := append([]string{*codex, "app-server"}, fs.Args()...)
	if err := b.Run(ctx, argv, stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "gatehouse codex app-server:", err)
		return 1
	}
	return 0
}

// serveBridgeCallback registers the bridge as a runtime and serves its signed
// callback, so the server forwards each decision to the bridge and records a
// conflict for an approval the bridge no longer holds. It sets b.RuntimeID.
func serveBridgeCallback(ctx context.Context, c *client.Client, b *codexbridge.Bridge, name, machine, listen, publicURL string, stderr io.Writer) (func(), error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	if publicURL == "" {
		publicURL = "http://" + ln.Addr().String()
	}
	rt, err := c.RegisterRuntime(ctx, api.RuntimeRegistration{Name: name, Machine: machine, CallbackURL: publicURL})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("register runtime: %w", err)
	}
	keys, err := c.Keys(ctx)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("fetch the server's keys: %w", err)
	}
	b.RuntimeID = rt.ID
	fmt.Fprintf(stderr, "gatehouse codex: runtime %s registered as %s, callback %s\n", rt.Name, rt.ID, publicURL)
	mux := http.NewServeMux()
	mux.Handle("POST "+api.DecidePath, &client.Handler{Keys: keys, RuntimeID: rt.ID, OnDecision: b.OnDecision})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(stderr, "gatehouse codex: callback:", err)
		}
	}()
	return func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		<-served
	}, nil
}
