package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/web"
)

// serveConfig is everything serve reads from flags and the environment.
type serveConfig struct {
	Addr                string
	Database            string
	BaseURL             string
	Rules               string
	MaxWaiters          int
	MaxWaitersPerCaller int
	DefaultExpiry       time.Duration
	MaxExpiry           time.Duration
	MaxPendingWait      time.Duration
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", env("GATEHOUSE_ADDR", "127.0.0.1:8080"), "listen address (GATEHOUSE_ADDR)")
	fs.StringVar(&c.Database, "database", defaultDatabase(), "sqlite:PATH or postgres://… (GATEHOUSE_DATABASE)")
	fs.StringVar(&c.BaseURL, "base-url", env("GATEHOUSE_BASE_URL", ""), "public URL of the server (GATEHOUSE_BASE_URL; default http://ADDR)")
	fs.StringVar(&c.Rules, "rules", env("GATEHOUSE_RULES", ""), "YAML rules file (GATEHOUSE_RULES)")
	fs.IntVar(&c.MaxWaiters, "max-waiters", envInt("GATEHOUSE_MAX_WAITERS", 20000), "long-polls held at once, in all (GATEHOUSE_MAX_WAITERS)")
	fs.IntVar(&c.MaxWaitersPerCaller, "max-waiters-per-caller", envInt("GATEHOUSE_MAX_WAITERS_PER_CALLER", 1000), "long-polls one caller may hold (GATEHOUSE_MAX_WAITERS_PER_CALLER)")
	fs.DurationVar(&c.DefaultExpiry, "default-expiry", envDuration("GATEHOUSE_DEFAULT_EXPIRY", time.Hour), "expiry of a request that asks for none (GATEHOUSE_DEFAULT_EXPIRY)")
	fs.DurationVar(&c.MaxExpiry, "max-expiry", envDuration("GATEHOUSE_MAX_EXPIRY", 7*24*time.Hour), "the longest expiry a filer may ask for (GATEHOUSE_MAX_EXPIRY)")
	fs.DurationVar(&c.MaxPendingWait, "max-pending-wait", envDuration("GATEHOUSE_MAX_PENDING_WAIT", web.DefaultMaxPendingWait), "the longest max_wait a pending grant may ask for (GATEHOUSE_MAX_PENDING_WAIT)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	return c, nil
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(env(name, "")); err == nil {
		return n
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(env(name, "")); err == nil {
		return d
	}
	return def
}

// runServe runs the server until ctx ends, then shuts down gracefully: waits are
// released first, then in-flight calls finish.
func runServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseServe(args, stderr)
	if err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	slog.SetDefault(log)
	if err := serve(ctx, cfg, stdout); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, cfg serveConfig, stdout io.Writer) error {
	// A broken rules file stops serve before anything listens.
	var rules *models.Rules
	if cfg.Rules != "" {
		var err error
		if rules, err = models.LoadRules(cfg.Rules); err != nil {
			return err
		}
	}
	changes := models.NewChanges()
	store, closeDB, err := openStore(cfg.Database, changes)
	if err != nil {
		return err
	}
	defer closeDB()
	store.DefaultExpiry, store.MaxExpiry = cfg.DefaultExpiry, cfg.MaxExpiry
	ctx, cancel := context.WithCancel(ctx)
	var bg sync.WaitGroup
	defer func() { cancel(); bg.Wait() }() // no goroutine outlives serve, and all end before the database closes
	listener, err := announceAcrossReplicas(ctx, &bg, cfg.Database, store, changes)
	if err != nil {
		return err
	}
	store.Rules = models.NewRuleSet(rules)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://" + ln.Addr().String()
	}
	// The signing key is made on first start; forwards are signed with it.
	key, err := store.SigningKey(ctx)
	if err != nil {
		ln.Close()
		return err
	}
	hooks := []models.DecisionHook{store.ForwardHook()}
	srv, err := web.New(web.Config{
		BaseURL: cfg.BaseURL, MaxWaiters: cfg.MaxWaiters, MaxWaitersPerCaller: cfg.MaxWaitersPerCaller,
		MaxPendingWait: cfg.MaxPendingWait,
	}, web.Deps{Store: store, Watcher: changes, DB: store.DB, DecisionHooks: hooks, Rules: store.Rules, Devices: store, Runtimes: store, Changes: changes,
		Grants: store, Audit: store})
	if err != nil {
		ln.Close()
		return err
	}
	senders, pushCfg, closePush, err := pushSenders(ctx, store, cfg.BaseURL)
	if err != nil {
		ln.Close()
		return err
	}
	defer closePush()
	pushCfg.Forget = store.MaxExpiry // no request stays open longer
	// The page's hub is the presence: an alert waits while an operator's page is visible.
	router := push.NewRouter(pushCfg, store, changes, senders, srv)
	forwarder := &web.Forwarder{Store: store, Changes: changes, Key: key, Now: store.Now}
	if err := forwarder.Instrument(srv.Registry()); err != nil {
		ln.Close()
		return err
	}

	countListens(srv.Registry(), listener)
	sweeper := &models.Sweeper{Store: store, Changes: changes, Hooks: hooks}
	bg.Go(func() { sweeper.Run(ctx) })
	holds := &models.HoldSweeper{Store: store, Changes: changes, Hooks: hooks}
	bg.Go(func() { holds.Run(ctx) })
	if cfg.Rules != "" {
		slog.Info("rules in force", "file", cfg.Rules, "rules", rules.Len(), "digest", rules.Digest[:12])
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		bg.Go(func() {
			if err := models.WatchRules(ctx, cfg.Rules, store.Rules, hup, nil); err != nil {
				slog.Error("rules watch stopped; SIGHUP and file changes will not reload", "err", err)
			}
		})
	}
	bg.Go(func() { _ = router.Run(ctx) })
	bg.Go(func() { forwarder.Run(ctx) })

	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	slog.Info("gatehouse listening", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "database", redact(cfg.Database))
	fmt.Fprintf(stdout, "gatehouse listening on %s\n", cfg.BaseURL)
	if err := printLoginURL(ctx, store, cfg.BaseURL, stdout); err != nil {
		slog.Error("login URL", "err", err)
	}

	select {
	case err = <-serveErr:
	case <-ctx.Done():
	}
	slog.Info("gatehouse stopping")
	srv.Close() // answer every long-poll now, so Shutdown need not wait for them
	shutCtx, shutCancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer shutCancel()
	if serr := httpSrv.Shutdown(shutCtx); serr != nil && err == nil {
		err = serr
	}
	cancel()
	bg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// printLoginURL prints a one-time login URL while no operator token exists, so
// the first person at the console can reach the page.
func printLoginURL(ctx context.Context, store *models.Store, baseURL string, stdout io.Writer) error {
	has, err := store.HasOperator(ctx)
	if err != nil || has {
		return err
	}
	ticket, err := store.CreateLoginTicket(ctx, web.LoginTicketTTL)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "No operator token exists yet. Open this one-time login URL (valid %s):\n  %s/login?token=%s\n", web.LoginTicketTTL, baseURL, ticket)
	return nil
}

// redact hides a password in a database URL for logs.
func redact(database string) string {
	if u, err := url.Parse(database); err == nil && u.User != nil {
		return u.Redacted()
	}
	return database
}
