// Package app is Gatehouse's one composition root: it builds the whole service
// (store, change bus, replica listener, web server, forwarder, sweepers, push
// router, rules watcher, metrics) from a Config. `gatehouse serve` and every
// test helper start the service through New, so tests run what production runs
// (the shape of benbjohnson/wtf's cmd/wtfd/main.go).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/chat"
	"github.com/gatehousehq/gatehouse/forward"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/push"
	"github.com/gatehousehq/gatehouse/review"
	"github.com/gatehousehq/gatehouse/web"
)

// Config is everything the service is built from. Zero values are the
// defaults `gatehouse serve` documents.
type Config struct {
	// Database is the database URL: sqlite:PATH or postgres://…. It is created
	// and migrated if need be.
	Database string
	// Store and Changes, when set, are an open store and its bus to build on
	// instead of Database (tests on a prepared store); the app leaves the
	// database open and runs no replica listener.
	Store   *store.Store
	Changes *store.Changes

	Addr string // listen address; default 127.0.0.1:8080, port 0 for a free one
	// Listener, when set, is bound already (serve binds before it makes the
	// database) and is used instead of Addr; the app closes it.
	Listener net.Listener
	BaseURL  string // public URL; default http://ADDR as bound
	// RulesFile is a YAML rules file, reloaded when it changes and on each
	// value from HUP (serve passes SIGHUP).
	RulesFile string
	HUP       <-chan os.Signal
	// ChatFile is the chat configuration (Slack destinations and routes);
	// ChatHTTP, if set, is the client for the chat services' APIs.
	ChatFile string
	ChatHTTP *http.Client
	// ChatSent, if set, is told of every chat send (tests).
	ChatSent func(m store.ChatMessage, out store.ChatSend)

	DefaultExpiry, MaxExpiry time.Duration // 0: the store's defaults
	// SuggestAfter is how many operator allows of one command family in one
	// project propose its remembered allow; 0: the store's default.
	SuggestAfter int
	// AttentionGrace is how long a waiting or review item stays open before
	// it is pushed; 0: push.DefaultAttentionGrace.
	AttentionGrace time.Duration
	Web            web.Config // waiter caps and test hooks; its BaseURL stands in for an empty BaseURL
	Forward        ForwardConfig
	Conn           ConnConfig
	// Reviewer configures the advisory reviewer; the zero value is none.
	Reviewer review.Config
	// ReviewStored, if set, is told of each review stored (tests).
	ReviewStored func(r *models.Request)
	// Stdout receives the listening line and the first login URL; nil: discard.
	Stdout io.Writer
}

// ForwardConfig tunes forwarding to runtimes; zero values are the defaults.
type ForwardConfig struct {
	HTTP                *http.Client
	Backoff, MaxBackoff time.Duration
	// Attempted, if set, is told of every recorded attempt (tests).
	Attempted func(f store.Forward, a store.Attempt)
}

// ConnConfig bounds what a connection may hold; zero values are the defaults
// (the limits and hygiene the docs promise). Tests set small values.
type ConnConfig struct {
	IdleTimeout       time.Duration // a keep-alive connection idle this long is closed (default 60s)
	ReadHeaderTimeout time.Duration // a request's headers must arrive within (default 10s)
	// BodyTimeout is how long a request's body may take to arrive (default
	// 30s). Long-polls and websockets have no body, so they are not cut.
	BodyTimeout    time.Duration
	MaxHeaderBytes int // default 64 KiB
	// MaxConnections caps open connections; one over it is answered 503 and
	// closed (default 30,000).
	MaxConnections int
}

// App is the assembled service. New builds it and opens its listener; Run
// serves; Close releases what New took.
type App struct {
	cfg Config

	Store     *store.Store
	Changes   *store.Changes
	Server    *web.Server
	Key       *store.ServerKey // signs forwards to runtimes
	Rules     *rules.RuleSet
	Forwarder *forward.Forwarder
	Chat      *chat.Service    // nil without a chat file
	Reviewer  *review.Reviewer // nil without a reviewer

	// The change bus's subscribers, each wired below: a decision committed by
	// the store wakes the waiters and runtime feeds (Server, through Changes.Watch),
	// the operator's page (Server's hub), the push router (phone notifications),
	// the forwarder (runtime callbacks), the expiry sweeper and the hold sweeper;
	// on PostgreSQL the replica listener relays other replicas' commits into it.
	router  *push.Router
	expiry  *store.Sweeper
	holds   *store.HoldSweeper
	escal   *store.EscalationSweeper
	replica *store.PGAnnouncer

	ln        net.Listener
	http      *http.Server
	closeDB   func()
	closePush func()

	ctx    context.Context // lives from New to Close: the replica listener
	cancel context.CancelFunc
	bg     sync.WaitGroup

	closeLn   sync.Once
	closeOnce sync.Once
}

// listenTimeout bounds how long New waits for the first LISTEN: a replica that
// cannot hear other replicas' changes must not take traffic.
const listenTimeout = 30 * time.Second

// New assembles the service and binds its address. On error everything taken
// so far is released.
func New(cfg Config) (_ *App, err error) {
	a := &App{cfg: cfg, closeDB: func() {}, closePush: func() {}}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.cfg.Stdout == nil {
		a.cfg.Stdout = io.Discard
	}
	a.ln = cfg.Listener // closed by Close, also on error
	// A broken rules file stops the service before anything listens.
	var rs *rules.Rules
	if cfg.RulesFile != "" {
		if rs, err = rules.LoadRules(cfg.RulesFile); err != nil {
			return nil, err
		}
	}
	// Bind before the database opens: a busy port must not leave a new,
	// empty database behind.
	a.cfg.Conn = cfg.Conn.withDefaults()
	if a.ln == nil {
		addr := cfg.Addr
		if addr == "" {
			addr = "127.0.0.1:8080"
		}
		if a.ln, err = net.Listen("tcp", addr); err != nil {
			return nil, err
		}
	}
	a.ln = &capListener{Listener: a.ln, max: int64(a.cfg.Conn.MaxConnections)}
	if err := CheckPush(); err != nil {
		return nil, err
	}
	if err := a.openStore(); err != nil {
		return nil, err
	}
	if cfg.DefaultExpiry > 0 {
		a.Store.DefaultExpiry = cfg.DefaultExpiry
	}
	if cfg.MaxExpiry > 0 {
		a.Store.MaxExpiry = cfg.MaxExpiry
	}
	if cfg.SuggestAfter > 0 {
		a.Store.SuggestAfter = cfg.SuggestAfter
	}
	if cfg.RulesFile != "" || a.Store.Rules == nil { // a given store may bring its rules
		a.Store.Rules = rules.NewRuleSet(rs)
	}
	a.Rules = a.Store.Rules

	if a.cfg.BaseURL == "" {
		a.cfg.BaseURL = cfg.Web.BaseURL
	}
	if a.cfg.BaseURL == "" {
		a.cfg.BaseURL = "http://" + a.ln.Addr().String()
	}
	// The signing key is made on first start; forwards are signed with it.
	if a.Key, err = a.Store.SigningKey(a.ctx); err != nil {
		return nil, err
	}
	if cfg.ChatFile != "" {
		if err := a.openChat(); err != nil {
			return nil, err
		}
	}
	wcfg := cfg.Web
	wcfg.BaseURL = a.cfg.BaseURL
	s := a.Store
	a.Server, err = web.New(wcfg, web.Deps{Store: s, Watcher: a.Changes, DB: s.DB, Rules: s.Rules, Audit: s,
		Devices: s, Runtimes: s, Changes: a.Changes, Grants: s, Chat: a.chatHandler()})
	if err != nil {
		return nil, err
	}
	if err := a.wireBackground(); err != nil {
		return nil, err
	}
	a.http = httpServer(a.Server.Handler(), a.cfg.Conn)
	return a, nil
}

// openStore opens the configured database (or takes the given store) and, on
// PostgreSQL, starts the listener that relays every replica's changes.
func (a *App) openStore() error {
	if a.cfg.Store != nil {
		a.Store, a.Changes = a.cfg.Store, a.cfg.Changes
		if a.Changes == nil {
			return errors.New("app: Config.Store needs its Changes")
		}
		return nil
	}
	a.Changes = store.NewChanges()
	store, closeDB, err := OpenStore(a.cfg.Database, a.Changes, true)
	if err != nil {
		return err
	}
	a.Store, a.closeDB = store, closeDB
	return a.listenAcrossReplicas()
}

// listenAcrossReplicas makes a PostgreSQL store announce through NOTIFY and
// relays every replica's notifications into the bus, so waiters here wake
// wherever a change was made. With SQLite (one replica) the bus stays the
// store's in-process announcer. It returns once the listener is in place.
func (a *App) listenAcrossReplicas() error {
	if !store.IsPostgres(a.cfg.Database) {
		return nil
	}
	pg := store.NewPGAnnouncer(a.cfg.Database, a.Store.DB, a.Changes)
	a.bg.Go(func() { pg.Run(a.ctx) })
	select {
	case <-pg.Listening():
	case <-time.After(listenTimeout):
		return fmt.Errorf("no LISTEN on %s within %s", store.NotifyChannel, listenTimeout)
	}
	// Only now: until the listener is in place, a NOTIFY would reach no one here
	// (and a revocation would not drop the authentication cache).
	a.Store.CacheAuth(a.Changes)
	a.Store.Announcer = pg
	a.replica = pg
	slog.Info("announcing changes across replicas", "channel", store.NotifyChannel)
	return nil
}

// wireBackground builds the bus's other subscribers and the metrics they export.
func (a *App) wireBackground() error {
	senders, pushCfg, closePush, err := PushSenders(a.ctx, a.Store, a.cfg.BaseURL)
	if err != nil {
		return err
	}
	a.closePush = closePush
	pushCfg.Forget = a.Store.MaxExpiry // no request stays open longer
	pushCfg.AttentionGrace = a.cfg.AttentionGrace
	// The page's hub is the presence: an alert waits while an operator's page is visible.
	a.router = push.NewRouter(pushCfg, a.Store, a.Changes, senders, a.Server)
	fc := a.cfg.Forward
	a.Forwarder = &forward.Forwarder{Store: a.Store, Changes: a.Changes, Key: a.Key, Now: a.Store.Now,
		HTTP: fc.HTTP, Backoff: fc.Backoff, MaxBackoff: fc.MaxBackoff, Attempted: fc.Attempted}
	if err := a.Forwarder.Instrument(a.Server.Registry()); err != nil {
		return err
	}
	countListens(a.Server.Registry(), a.replica)
	a.expiry = &store.Sweeper{Store: a.Store, Changes: a.Changes}
	a.holds = &store.HoldSweeper{Store: a.Store, Changes: a.Changes}
	a.escal = &store.EscalationSweeper{Store: a.Store, Changes: a.Changes}
	if a.Reviewer, err = review.New(a.cfg.Reviewer, a.Store, a.Changes); err != nil {
		return err
	}
	if a.Reviewer != nil {
		a.Reviewer.Stored = a.cfg.ReviewStored
		slog.Info("advisory reviewer", "model", a.Reviewer.Provider.Model(), "timeout", a.cfg.Reviewer.Timeout, "daily_tokens", a.cfg.Reviewer.DailyTokens)
	}
	return nil
}

// URL is the service's public base URL.
func (a *App) URL() string { return a.cfg.BaseURL }

// Addr is the address the service listens on.
func (a *App) Addr() net.Addr { return a.ln.Addr() }

// Run serves until ctx ends, then shuts down: waits are released first, then
// in-flight calls finish, then the background work stops. Call it once.
func (a *App) Run(ctx context.Context) error {
	runCtx, stop := context.WithCancel(a.ctx)
	var bg sync.WaitGroup
	defer func() { stop(); bg.Wait() }() // no goroutine outlives Run
	bg.Go(func() { a.expiry.Run(runCtx) })
	bg.Go(func() { a.holds.Run(runCtx) })
	bg.Go(func() { a.escal.Run(runCtx) })
	bg.Go(func() { _ = a.router.Run(runCtx) })
	bg.Go(func() { a.Forwarder.Run(runCtx) })
	if a.Chat != nil {
		bg.Go(func() { a.Chat.Run(runCtx) })
	}
	if a.Reviewer != nil {
		bg.Go(func() { a.Reviewer.Run(runCtx) })
	}
	if a.cfg.RulesFile != "" {
		r := a.Rules.Current()
		slog.Info("rules in force", "file", a.cfg.RulesFile, "rules", r.Len(), "digest", r.Digest[:12])
		bg.Go(func() {
			if err := rules.WatchRules(runCtx, a.cfg.RulesFile, a.Rules, a.cfg.HUP, nil); err != nil {
				slog.Error("rules watch stopped; SIGHUP and file changes will not reload", "err", err)
			}
		})
	}

	serveErr := make(chan error, 1)
	a.closeLn.Do(func() {}) // from here Serve owns the listener and Shutdown closes it
	go func() { serveErr <- a.http.Serve(a.ln) }()
	slog.Info("gatehouse listening", "addr", a.ln.Addr().String(), "base_url", a.cfg.BaseURL)
	fmt.Fprintf(a.cfg.Stdout, "gatehouse listening on %s\n", a.cfg.BaseURL)
	if err := a.printLoginURL(ctx); err != nil {
		slog.Error("login URL", "err", err)
	}

	var err error
	select {
	case err = <-serveErr:
	case <-ctx.Done():
	}
	slog.Info("gatehouse stopping")
	a.Server.Close() // answer every long-poll now, so Shutdown need not wait for them
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if serr := a.http.Shutdown(shutCtx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Close releases what New took: the listener (if Run never served), the
// replica listener, the push senders and the database (when the app opened
// it). Call it after Run has returned.
func (a *App) Close() error {
	a.closeOnce.Do(func() {
		a.closeLn.Do(func() {
			if a.ln != nil {
				a.ln.Close()
			}
		})
		if a.Server != nil {
			a.Server.Close()
		}
		a.cancel()
		a.bg.Wait()
		a.closePush()
		a.closeDB()
	})
	return nil
}

// printLoginURL prints a one-time login URL while no operator token exists, so
// the first person at the console can reach the page.
func (a *App) printLoginURL(ctx context.Context) error {
	has, err := a.Store.HasOperator(ctx)
	if err != nil || has {
		return err
	}
	ticket, err := a.Store.CreateLoginTicket(ctx, web.LoginTicketTTL)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.cfg.Stdout, "No operator token exists yet. Open this one-time login URL (valid %s) to log in as operator %q:\n  %s/login?token=%s\n", web.LoginTicketTTL, store.FirstOperator, a.cfg.BaseURL, ticket)
	return nil
}
