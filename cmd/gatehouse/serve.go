//go:build !agent

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/web"
)

// parseServe reads serve's flags and environment into the service's
// configuration. A bad value in either is an error naming it.
func parseServe(args []string, stdout, stderr io.Writer) (app.Config, error) {
	var c app.Config
	var envs envReader
	fs := newFlags("serve", stdout, stderr)
	fs.StringVar(&c.Addr, "addr", env("GATEHOUSE_ADDR", "127.0.0.1:8080"), "listen address (GATEHOUSE_ADDR)")
	fs.StringVar(&c.Database, "database", defaultDatabase(), "sqlite:PATH or postgres://… (GATEHOUSE_DATABASE)")
	fs.StringVar(&c.BaseURL, "base-url", env("GATEHOUSE_BASE_URL", ""), "public URL of the server (GATEHOUSE_BASE_URL; default http://ADDR)")
	fs.StringVar(&c.RulesFile, "rules", env("GATEHOUSE_RULES", ""), "YAML rules file (GATEHOUSE_RULES)")
	fs.StringVar(&c.ChatFile, "chat", env("GATEHOUSE_CHAT", ""), "YAML chat file: Slack and Telegram destinations and routes (GATEHOUSE_CHAT)")
	fs.IntVar(&c.Web.MaxWaiters, "max-waiters", envs.Int("GATEHOUSE_MAX_WAITERS", 20000), "long-polls held at once, in all (GATEHOUSE_MAX_WAITERS)")
	fs.IntVar(&c.Web.MaxWaitersPerCaller, "max-waiters-per-caller", envs.Int("GATEHOUSE_MAX_WAITERS_PER_CALLER", 1000), "long-polls one caller may hold (GATEHOUSE_MAX_WAITERS_PER_CALLER)")
	fs.Float64Var(&c.Web.FilingRate, "filing-rate", envs.Float("GATEHOUSE_FILING_RATE", web.DefaultFilingRate), "filings a second each agent token may sustain (GATEHOUSE_FILING_RATE)")
	fs.IntVar(&c.Web.FilingBurst, "filing-burst", envs.Int("GATEHOUSE_FILING_BURST", web.DefaultFilingBurst), "filings each agent token may make at once (GATEHOUSE_FILING_BURST)")
	fs.Float64Var(&c.Web.RuntimeFilingRate, "runtime-filing-rate", envs.Float("GATEHOUSE_RUNTIME_FILING_RATE", web.DefaultRuntimeFilingRate),
		"filings a second each runtime token (a gate, a bridge: many agents) may sustain (GATEHOUSE_RUNTIME_FILING_RATE)")
	fs.IntVar(&c.Web.RuntimeFilingBurst, "runtime-filing-burst", envs.Int("GATEHOUSE_RUNTIME_FILING_BURST", web.DefaultRuntimeFilingBurst),
		"filings each runtime token may make at once (GATEHOUSE_RUNTIME_FILING_BURST)")
	fs.Func("trusted-proxies", "CIDR,… of proxies whose X-Forwarded-For names the client, for the login limiter (GATEHOUSE_TRUSTED_PROXIES)", func(v string) error {
		p, err := parsePrefixes(v)
		c.Web.TrustedProxies = p
		return err
	})
	if v := env("GATEHOUSE_TRUSTED_PROXIES", ""); v != "" {
		p, err := parsePrefixes(v)
		if err != nil {
			envs.errs = append(envs.errs, fmt.Errorf("GATEHOUSE_TRUSTED_PROXIES: %w", err))
		}
		c.Web.TrustedProxies = p
	}
	fs.IntVar(&c.Conn.MaxConnections, "max-connections", envs.Int("GATEHOUSE_MAX_CONNECTIONS", 30000), "open connections at once; one over is answered 503 (GATEHOUSE_MAX_CONNECTIONS)")
	fs.DurationVar(&c.DefaultExpiry, "default-expiry", envs.Duration("GATEHOUSE_DEFAULT_EXPIRY", time.Hour), "expiry of a request that asks for none (GATEHOUSE_DEFAULT_EXPIRY)")
	fs.DurationVar(&c.MaxExpiry, "max-expiry", envs.Duration("GATEHOUSE_MAX_EXPIRY", 7*24*time.Hour), "the longest expiry a filer may ask for (GATEHOUSE_MAX_EXPIRY)")
	fs.IntVar(&c.SuggestAfter, "suggest-after", envs.Int("GATEHOUSE_SUGGEST_AFTER", models.DefaultSuggestAfter),
		"operator allows of one command family in one project before the page suggests remembering it (GATEHOUSE_SUGGEST_AFTER)")
	fs.DurationVar(&c.AttentionGrace, "attention-grace", envs.Duration("GATEHOUSE_ATTENTION_GRACE", push.DefaultAttentionGrace),
		"how long a waiting or review item stays open before it is pushed, once per session per grace (GATEHOUSE_ATTENTION_GRACE)")
	fs.DurationVar(&c.Web.MaxPendingWait, "max-pending-wait", envs.Duration("GATEHOUSE_MAX_PENDING_WAIT", web.DefaultMaxPendingWait), "the longest max_wait a pending grant may ask for (GATEHOUSE_MAX_PENDING_WAIT)")
	reviewerKey := reviewerFlags(fs, &envs, &c.Reviewer)
	// -h prints the usage whatever the environment holds; a bad variable is
	// reported once the flags are read.
	if err := fs.parse(args); err != nil {
		return c, err
	}
	if err := envs.Err(); err != nil {
		fmt.Fprintln(stderr, "gatehouse serve:", err)
		return c, err
	}
	c.Reviewer.APIKey = *reviewerKey
	if fs.NArg() > 0 {
		err := fmt.Errorf("serve takes no arguments, got %q", fs.Args())
		fmt.Fprintln(stderr, "gatehouse serve:", err)
		return c, err
	}
	if err := store.CheckURL(c.Database); err != nil {
		err = fmt.Errorf("--database (GATEHOUSE_DATABASE): %w", err)
		fmt.Fprintln(stderr, "gatehouse serve:", err)
		return c, err
	}
	if err := checkReviewer(fs.FlagSet, c.Reviewer); err != nil {
		fmt.Fprintln(stderr, "gatehouse serve:", err)
		return c, err
	}
	if err := checkPositive(fs.FlagSet, "max-waiters", "max-waiters-per-caller", "max-connections", "filing-rate", "filing-burst", "runtime-filing-rate", "runtime-filing-burst", "default-expiry", "max-expiry", "max-pending-wait", "suggest-after", "attention-grace"); err != nil {
		fmt.Fprintln(stderr, "gatehouse serve:", err)
		return c, err
	}
	return c, nil
}

// runServe parses the configuration, assembles the service and runs it until
// ctx ends (app.Run: waits are released first, then in-flight calls finish).
func runServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseServe(args, stdout, stderr)
	if err != nil {
		return exitCode(err, 2)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	// Put back the logger before, so a serve run in-process (the tests) does not
	// leave later servers logging into its stderr.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(log)
	if err := serve(ctx, cfg, stdout, stderr); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

// serve takes, in order, the steps that leave nothing behind when they fail
// (the address, the push settings) before it makes the database file, so a
// start on a busy port or with a bad key leaves no empty database.
func serve(ctx context.Context, cfg app.Config, stdout, stderr io.Writer) error {
	ln, err := listen(cfg.Addr)
	if err != nil {
		return err
	}
	if err := prepareDatabase(cfg.Database, stderr); err != nil {
		ln.Close()
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	cfg.HUP, cfg.Stdout, cfg.Listener = hup, stdout, ln // app.New closes ln, also when it fails
	a, err := app.New(cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx)
}

// listen binds serve's address, naming the setting to change when it cannot.
func listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("cannot listen on %s: another process is listening there; stop it, or choose a free address with --addr HOST:PORT or GATEHOUSE_ADDR (e.g. --addr 127.0.0.1:8081)", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w; choose another address with --addr HOST:PORT or GATEHOUSE_ADDR", addr, err)
	}
	return ln, nil
}

// prepareDatabase checks the push settings, then makes the default
// database's directory and a new SQLite file with its owner-only mode, and
// says where the database is.
func prepareDatabase(database string, stderr io.Writer) error {
	if err := app.CheckPush(); err != nil {
		return err
	}
	if err := makeDatabaseDir(database); err != nil {
		return err
	}
	if err := createDatabaseFile(database); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "gatehouse: database %s\n", redact(database))
	warnLoosePermissions(database, stderr)
	return nil
}

// redact hides a password in a database URL for logs.
func redact(database string) string {
	if u, err := url.Parse(database); err == nil && u.User != nil {
		return u.Redacted()
	}
	return database
}

// parsePrefixes reads "CIDR,CIDR,…" (a bare address is its own /32 or /128).
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not a CIDR (e.g. 10.0.0.0/8)", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p)
	}
	return out, nil
}
