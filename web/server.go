// Package web is Gatehouse's HTTP face: the JSON API, long-polls, the operator's
// page and its websocket, all on one Echo server.
package web

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/internal/park"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/rules"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"gorm.io/gorm"
)

// Store is what the web layer needs of the record.
type Store interface {
	// CreateRequest judges the new request by the rules in force. Every
	// decision the store records writes its own forward outbox row.
	CreateRequest(ctx context.Context, p models.Principal, n models.NewRequest, idemKey string) (*models.Request, bool, error)
	GetRequest(ctx context.Context, id string) (*models.Request, error)
	ListRequests(ctx context.Context, f store.ListFilter) ([]models.Request, string, error)
	PatchRequest(ctx context.Context, id string, by models.Principal, p store.Patch) (*models.Request, error)
	Withdraw(ctx context.Context, id string, by models.Principal, status string) (*models.Request, error)
	WithdrawBecause(ctx context.Context, id string, by models.Principal, status, reason string) (*models.Request, error)
	Decide(ctx context.Context, id string, d models.Decision) (*models.Request, error)
	DecideEach(ctx context.Context, items []store.BatchItem) (string, []store.Outcome)
	AuditTrail(ctx context.Context, id string) ([]store.Audit, error)
	CountOpen(ctx context.Context) (int64, error)
	Authenticate(ctx context.Context, secret string) (*models.Token, error)
	SessionFor(ctx context.Context, cookie string) (*models.Session, error)
	UseLoginTicket(ctx context.Context, secret string) (*models.Session, string, error)
	LoginWithToken(ctx context.Context, secret string) (*models.Session, string, error)
	EndSession(ctx context.Context, cookie string) error
	DescribeSession(ctx context.Context, id, userAgent string) error
	ListSessions(ctx context.Context) ([]models.Session, error)
	EndSessionID(ctx context.Context, id, actor, via string) error
}

// Watcher wakes a waiter at the next change of one request (a *store.Changes).
type Watcher interface {
	// WatchFunc calls f once, without blocking, with the next change of id;
	// stop cancels and reports whether f was still to be called.
	WatchFunc(id string, f func(models.Change)) (stop func() bool)
}

// parker parks a request wait's hijacked connection until a change or its
// timeout (a *park.Parker): the one job of the wait route it does not do
// itself.
type parker interface {
	// Watch starts a wait on request id that may be parked; the route reads
	// the request after it, then parks the wait or cancels it.
	Watch(id string) *park.Wait
	// Count is how many waits are parked.
	Count() int
	// Close answers every parked wait and returns once all are written.
	Close()
}

// RulesInForce gives the rules that judge new requests (a *rules.RuleSet).
type RulesInForce interface {
	Current() *rules.Rules
}

// Config is the server's settings.
type Config struct {
	BaseURL             string // e.g. http://127.0.0.1:8080; sets cookie Secure and the Origin check
	MaxWaiters          int    // all long-polls at once
	MaxWaitersPerCaller int    // long-polls of one caller at once
	BodyLimit           string // e.g. "64K"
	// OnWaitStart and OnWaitEnd, if set, are called when a long-poll starts to
	// wait on the change announcement and after it has let go of its slot.
	// Tests synchronise on them.
	OnWaitStart, OnWaitEnd func()
	// OnFeedWake, if set, is called each time a waiting runtime feed is woken to
	// read again. Tests count the wakes.
	OnFeedWake func(runtimeID string)

	// NoPark keeps every request wait on net/http's goroutine instead of
	// parking its connection (internal/park): for comparing the two.
	NoPark bool
	// TrustedProxies are the proxies whose X-Forwarded-For names the real
	// client (for the login limiter); without them the socket's address is the
	// client, so no header can escape the limit.
	TrustedProxies []netip.Prefix

	// FilingRate and FilingBurst are each token's filing allowance: a token
	// bucket refilled at FilingRate a second holding FilingBurst (0: 10 and
	// 100, which a busy CI fleet never meets). RuntimeFilingRate and
	// RuntimeFilingBurst are a runtime token's, which files for many agents
	// (0: 100 and 1000).
	FilingRate         float64
	FilingBurst        int
	RuntimeFilingRate  float64
	RuntimeFilingBurst int

	// MaxPendingWait caps a pending grant's max_wait; 0: DefaultMaxPendingWait.
	MaxPendingWait time.Duration

	// MCPMaxHold caps how long one wait_for_decision call holds (0:
	// DefaultMCPMaxHold), and MCPProgressEvery is how often it sends progress
	// when the call carries a progress token (0: DefaultMCPProgressEvery).
	MCPMaxHold, MCPProgressEvery time.Duration
}

// Deps are the concrete parts cmd wires in.
type Deps struct {
	Store   Store
	Watcher Watcher
	DB      *gorm.DB // for readiness; may be nil
	// Rules, when set, are shown at GET /v1/rules.
	Rules RulesInForce
	// Devices, when set, serves the push device routes (/v1/devices, /v1/webpush/…).
	Devices DeviceStore
	// Runtimes and Changes serve runtime registration, the signing keys and the
	// pull feed; without them those routes are absent.
	Runtimes RuntimeStore
	Changes  store.Subscriber
	// Grants, when set, serves the pending-grant routes (/v1/pending…).
	Grants Grants
	// Audit, when set, serves the whole chain and its signed head (/v1/audit…).
	Audit AuditLog
	// Chat, when set, serves the chat services' callbacks under /chat/.
	Chat http.Handler
}

// Server is the HTTP server.
type Server struct {
	cfg       Config
	echo      *echo.Echo
	store     Store
	watcher   Watcher
	db        *gorm.DB
	runtimes  RuntimeStore
	changes   store.Subscriber
	metrics   *metrics
	waiters   *waiterCaps
	filing    *filingLimits
	hooks     map[string]hookFormat // the hook routes (hookRoute)
	bodyLimit int64                 // BodyLimit in bytes
	baseURL   *url.URL
	rules     RulesInForce
	devices   DeviceStore
	mcp       http.Handler // /mcp, the MCP streamable HTTP handler

	reads  *freshReads // coalesced re-reads for waiters
	parked parker      // parked request waits
	grants Grants
	audit  AuditLog
	chat   http.Handler

	closeOnce sync.Once
	closing   chan struct{} // closed when the server stops: releases every wait

	pages   *pages         // the operator's page and its live hub
	bg      sync.WaitGroup // the server's own goroutines (the hub); Close waits for them
	bgMu    sync.Mutex     // orders starting a goroutine in bg with Close
	stopped bool           // guarded by bgMu: no goroutine starts after Close
}

// New builds the server and its routes.
func New(cfg Config, d Deps) (*Server, error) {
	if cfg.MaxWaiters <= 0 {
		cfg.MaxWaiters = 20000
	}
	if cfg.MaxWaitersPerCaller <= 0 {
		cfg.MaxWaitersPerCaller = 1000
	}
	if cfg.MaxPendingWait <= 0 {
		cfg.MaxPendingWait = DefaultMaxPendingWait
	}
	if cfg.MCPMaxHold <= 0 {
		cfg.MCPMaxHold = DefaultMCPMaxHold
	}
	if cfg.MCPProgressEvery <= 0 {
		cfg.MCPProgressEvery = DefaultMCPProgressEvery
	}
	if cfg.BodyLimit == "" {
		cfg.BodyLimit = "64K"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://127.0.0.1:8080"
	}
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || base.Host == "" {
		return nil, models.Errorf(models.ECodeInvalid, "base URL %q is not an absolute URL", cfg.BaseURL)
	}
	limit, err := parseBodyLimit(cfg.BodyLimit)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, store: d.Store, watcher: d.Watcher, db: d.DB, rules: d.Rules, devices: d.Devices,
		runtimes: d.Runtimes, changes: d.Changes, grants: d.Grants, audit: d.Audit, chat: d.Chat,
		waiters: newWaiterCaps(cfg.MaxWaiters, cfg.MaxWaitersPerCaller),
		filing:  newFilingLimits(cfg.FilingRate, cfg.FilingBurst, cfg.RuntimeFilingRate, cfg.RuntimeFilingBurst),
		baseURL: base, closing: make(chan struct{}), hooks: map[string]hookFormat{}, bodyLimit: limit,
	}
	s.reads = newFreshReads(d.Store.GetRequest)
	s.parked = park.New(park.Config{
		Watcher: d.Watcher, Read: s.reads.get, Answer: encodeWaitAnswer, Woken: encodeWoken,
		Released: s.observeRelease, Started: cfg.OnWaitStart,
	})
	s.metrics = newMetrics(s)
	s.mcp = s.newMCPHandler()
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = clientIPExtractor(cfg.TrustedProxies)
	e.Pre(s.hookFallback) // around everything below, the error handler's statuses included
	e.Use(middleware.Recover())
	e.Use(middleware.BodyLimit(cfg.BodyLimit))
	s.echo = e
	feed := d.Changes
	if feed == nil {
		feed, _ = d.Watcher.(store.Subscriber)
	}
	if err := s.setupPages(feed); err != nil {
		return nil, err
	}
	s.routes()
	if err := s.checkHookRoutes(); err != nil {
		return nil, err
	}
	return s, nil
}

// Handler is the server as an http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Echo exposes the router so other parts (the page, MCP) can add routes.
func (s *Server) Echo() *echo.Echo { return s.echo }

// Close releases every wait; call it before http.Server.Shutdown so long-polls
// answer at once instead of holding the shutdown.
// It also ends the page's hub and closes its websockets, asking browsers to
// reconnect (to this server once it is back, or another replica).
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	// Answer every parked wait before the listener goes.
	s.parked.Close()
	s.bgMu.Lock()
	s.stopped = true
	s.bgMu.Unlock()
	s.bg.Wait()
}

// BaseURL is the public URL of the server.
func (s *Server) BaseURL() string { return s.baseURL.String() }

// secureCookies reports whether cookies must be Secure.
func (s *Server) secureCookies() bool { return s.baseURL.Scheme == "https" }

// healthz answers liveness and, when a database is wired, readiness: {"status":"ok"},
// or the usual error shape with 503.
func (s *Server) healthz(c echo.Context) error {
	if s.db != nil {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		sqlDB, err := s.db.DB()
		if err == nil {
			err = sqlDB.PingContext(ctx)
		}
		if err != nil {
			return models.Errorf(codeUnavailable, "database unreachable")
		}
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
