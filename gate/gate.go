// Package gate is `gatehouse gate`: a reverse proxy in front of one upstream
// API that lets through what its rules allow, refuses what they deny, and for
// the rest files a request-bound grant with Gatehouse and forwards the
// identical request once after a person approved it. It holds no state of its
// own: every grant lives in Gatehouse, so a restarted gate loses nothing.
package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"golang.org/x/sync/singleflight"
)

// Grants is what the gate needs of Gatehouse: the runtime side of the
// request-bound grants (a *client.Client with a runtime token).
type Grants interface {
	ClaimPending(ctx context.Context, t api.NewPending) (*client.Claim, error)
	FilePending(ctx context.Context, t api.NewPending) (*api.PendingFiled, error)
	GetPending(ctx context.Context, id string) (*api.PendingWait, error)
	WaitPending(ctx context.Context, id string, timeout time.Duration) (*api.PendingWait, error)
}

// DefaultMaxBody bounds a request body the gate reads, hashes and forwards.
const DefaultMaxBody = 10 << 20

// Middleware is how the gate names itself in the grants it files.
const Middleware = "gatehouse-gate"

// Config is one gate.
type Config struct {
	Upstream    *url.URL // scheme http or https, a host, and optionally a base path
	Sandbox     string   // the identifier grants are bound to
	Rules       *Rules
	Credentials []Header // added to every forwarded request
	Strip       []string // removed from every forwarded request, besides Authorization
	MaxBody     int64    // 0: DefaultMaxBody
	Grants      Grants
	Logger      *slog.Logger
	// Transport reaches the upstream; nil: http.DefaultTransport.
	Transport http.RoundTripper
}

// Gate is the proxy; it is an http.Handler.
type Gate struct {
	cfg   Config
	host  string // lower-case host of the upstream, as grants name it
	port  int
	base  string          // the upstream's escaped base path without its trailing slash
	strip map[string]bool // headerKey of each header removed before forwarding
	proxy *httputil.ReverseProxy
	log   *slog.Logger
	// filing collapses concurrent asks for one digest into one POST /v1/pending.
	filing singleflight.Group
}

// overrideHeaders can change what an upstream does with a request after the
// gate decided on its method and path, or speak for the agent beside the
// gate's credential (Cookie), so they never pass. overridePrefixes are
// families of them (X-Original-Method, X-Forwarded-Method, X-Forwarded-Uri…):
// the proxy itself drops only X-Forwarded-For, -Host and -Proto.
var (
	overrideHeaders  = []string{"X-Http-Method-Override", "X-Http-Method", "X-Method-Override", "X-Rewrite-Url", "Forwarded", "Cookie"}
	overridePrefixes = []string{"X-Original-", "X-Forwarded-"}
)

// New checks the configuration and builds the gate.
func New(cfg Config) (*Gate, error) {
	u := cfg.Upstream
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, errors.New("upstream must be an http or https URL with a host")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("upstream must not carry a query, fragment or user")
	}
	if cfg.Rules == nil || cfg.Grants == nil {
		return nil, errors.New("gate needs rules and a Gatehouse client")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gate{cfg: cfg, host: strings.ToLower(u.Hostname()), base: strings.TrimSuffix(u.EscapedPath(), "/"), log: cfg.Logger}
	g.port = 443
	if u.Scheme == "http" {
		g.port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("upstream port %q is not a port", p)
		}
		g.port = n
	}
	g.strip = map[string]bool{"authorization": true}
	for _, h := range overrideHeaders {
		g.strip[headerKey(h)] = true
	}
	for _, h := range cfg.Strip {
		if err := ValidateHeaderName(h); err != nil {
			return nil, fmt.Errorf("strip: %w", err)
		}
		g.strip[headerKey(h)] = true
	}
	g.proxy = &httputil.ReverseProxy{
		Rewrite:       g.rewrite,
		FlushInterval: -1, // stream: every write of the upstream reaches the agent at once
		Transport:     cfg.Transport,
		ErrorHandler:  g.upstreamFailed,
		ErrorLog:      slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	return g, nil
}
