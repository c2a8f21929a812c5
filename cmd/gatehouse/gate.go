package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/gate"
	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

// gateConfig is `gatehouse gate`'s flags, checked.
type gateConfig struct {
	listen   string
	gate     gate.Config
	url      string
	token    string
	rulesSrc string
	tlsCert  string // with tlsKey: serve HTTPS, for clients such as gh that insist on it
	tlsKey   string
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// sandboxPattern is Gatehouse's identifier rule for sandbox, checked here so a
// bad --sandbox stops the gate instead of failing every ask.
var sandboxPattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$`)

// parseGate reads the flags strictly: any bad value stops with a message naming it.
func parseGate(args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) (gateConfig, error) {
	fs := newFlags("gate", stdout, stderr)
	var cfg gateConfig
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:9000", "address the agent's client talks to")
	upstream := fs.String("upstream", "", "the API behind the gate, e.g. https://api.github.com (required)")
	fs.StringVar(&cfg.gate.Sandbox, "sandbox", "", "the sandbox identifier grants are bound to (required)")
	fs.StringVar(&cfg.rulesSrc, "rules", "", "rules file (YAML); without one every request asks")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM), with --tls-key")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "the certificate's private key (PEM)")
	maxBody := fs.String("max-body", "10MiB", "largest request body the gate accepts (413 beyond)")
	var creds, strip listFlag
	fs.Var(&creds, "credential", "'Header: value' added upstream, $VARS from the gate's environment (repeatable)")
	fs.Var(&strip, "strip", "a header of the agent's removed before forwarding, besides Authorization (repeatable)")
	gh, _ := getenv("GATEHOUSE_URL")
	fs.StringVar(&cfg.url, "url", orDefault(gh, "http://127.0.0.1:8080"), "Gatehouse URL (GATEHOUSE_URL)")
	// Read after parsing, so that no usage shows it.
	fs.StringVar(&cfg.token, "token", "", "a runtime token (default $GATEHOUSE_TOKEN)")
	if err := fs.parse(args); err != nil {
		return cfg, err
	}
	if cfg.token == "" {
		cfg.token, _ = getenv("GATEHOUSE_TOKEN")
	}
	fail := func(format string, a ...any) (gateConfig, error) {
		err := fmt.Errorf("gatehouse gate: "+format, a...)
		fmt.Fprintln(stderr, err)
		return cfg, err
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	u, err := url.Parse(*upstream)
	switch {
	case *upstream == "":
		return fail("--upstream is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fail("--upstream %q: want http(s)://host[:port][/base], no query or user", *upstream)
	}
	cfg.gate.Upstream = u
	if !sandboxPattern.MatchString(cfg.gate.Sandbox) {
		return fail("--sandbox %q: want an identifier matching %s", cfg.gate.Sandbox, sandboxPattern)
	}
	if _, _, err := net.SplitHostPort(cfg.listen); err != nil {
		return fail("--listen %q: %v", cfg.listen, err)
	}
	n, err := humanize.ParseBytes(*maxBody)
	if err != nil || n == 0 || n > 1<<30 {
		return fail("--max-body %q: want a size from 1 byte to 1GiB, e.g. 10MiB", *maxBody)
	}
	cfg.gate.MaxBody = int64(n)
	for _, c := range creds {
		h, err := gate.ParseCredential(c, getenv)
		if err != nil {
			return fail("--credential: %v", err)
		}
		cfg.gate.Credentials = append(cfg.gate.Credentials, h)
	}
	for _, h := range strip {
		if err := gate.ValidateHeaderName(h); err != nil {
			return fail("--strip: %v", err)
		}
	}
	cfg.gate.Strip = strip
	if g, err := url.Parse(cfg.url); err != nil || (g.Scheme != "http" && g.Scheme != "https") || g.Host == "" {
		return fail("--url %q (GATEHOUSE_URL): want the Gatehouse server's http(s) URL", cfg.url)
	}
	if cfg.token == "" {
		return fail("a runtime token is required: --token or GATEHOUSE_TOKEN")
	}
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return fail("--tls-cert and --tls-key go together")
	}
	if cfg.tlsCert != "" {
		if _, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey); err != nil {
			return fail("--tls-cert/--tls-key: %v", err)
		}
	}
	cfg.gate.Rules = &gate.Rules{}
	if cfg.rulesSrc != "" {
		if cfg.gate.Rules, err = gate.LoadRules(cfg.rulesSrc); err != nil {
			return fail("--rules: %v", err)
		}
	}
	return cfg, nil
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// runGate runs the gate until ctx ends.
func runGate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseGate(args, os.LookupEnv, stdout, stderr)
	if err != nil {
		return exitCode(err, 2)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg.gate.Logger = log
	c, err := newClient(cfg.url, cfg.token)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse gate:", err)
		return 2
	}
	cfg.gate.Grants = c
	if err := serveGate(ctx, cfg, stdout); err != nil {
		log.Error("gate", "err", err)
		return 1
	}
	return 0
}

func serveGate(ctx context.Context, cfg gateConfig, stdout io.Writer) error {
	g, err := gate.New(cfg.gate)
	if err != nil {
		return err
	}
	if err := checkRuntimeToken(ctx, cfg.gate.Grants, cfg.gate.Logger); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(cfg.gate.Logger.Handler(), slog.LevelWarn)}
	scheme := "http"
	serveErr := make(chan error, 1)
	if cfg.tlsCert != "" {
		scheme = "https"
		go func() { serveErr <- srv.ServeTLS(ln, cfg.tlsCert, cfg.tlsKey) }()
	} else {
		go func() { serveErr <- srv.Serve(ln) }()
	}
	cfg.gate.Logger.Info("gate listening", "addr", ln.Addr().String(), "upstream", cfg.gate.Upstream.String(),
		"sandbox", cfg.gate.Sandbox, "rules", cfg.gate.Rules.Len(), "gatehouse", cfg.url)
	fmt.Fprintf(stdout, "gatehouse gate listening on %s://%s for %s\n", scheme, ln.Addr(), cfg.gate.Upstream)
	select {
	case err = <-serveErr:
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutCtx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// checkRuntimeToken reads a grant that does not exist: a runtime token gets 404,
// any other token 401 or 403, which stops the gate before it listens. An
// unreachable Gatehouse does not: the gate's allow and deny work without it.
func checkRuntimeToken(ctx context.Context, g gate.Grants, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := g.GetPending(ctx, "gate_start_probe")
	var ce *client.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.Status == http.StatusNotFound:
		return nil
	case errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
		return fmt.Errorf("GATEHOUSE_TOKEN (--token) is not a runtime token Gatehouse accepts: %s", ce.Detail)
	default:
		log.Warn("gate cannot reach Gatehouse yet; asks answer 502 until it can", "err", err)
		return nil
	}
}
