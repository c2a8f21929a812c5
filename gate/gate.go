// Package gate is `gatehouse gate`: a reverse proxy in front of one upstream
// API that lets through what its rules allow, refuses what they deny, and for
// the rest files a request-bound grant with Gatehouse and forwards the
// identical request once after a person approved it. It holds no state of its
// own: every grant lives in Gatehouse, so a restarted gate loses nothing.
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/client"
)

// Grants is what the gate needs of Gatehouse: the runtime side of the
// request-bound grants (a *client.Client with a runtime token).
type Grants interface {
	ClaimPending(ctx context.Context, t client.PendingTarget) (*client.Claim, error)
	FilePending(ctx context.Context, t client.PendingTarget) (*client.PendingFiled, error)
	GetPending(ctx context.Context, id string) (*client.PendingStatus, error)
	WaitPending(ctx context.Context, id string, timeout time.Duration) (*client.PendingStatus, error)
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
	base  string // the upstream's escaped base path without its trailing slash
	strip []string
	proxy *httputil.ReverseProxy
	log   *slog.Logger
}

// overrideHeaders can change what an upstream does with a request after the
// gate decided on its method and path, so they never pass.
var overrideHeaders = []string{"X-Http-Method-Override", "X-Http-Method", "X-Method-Override", "X-Original-Url", "X-Rewrite-Url"}

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
	g.strip = append([]string{"Authorization"}, overrideHeaders...)
	for _, h := range cfg.Strip {
		if err := ValidateHeaderName(h); err != nil {
			return nil, fmt.Errorf("strip: %w", err)
		}
		g.strip = append(g.strip, http.CanonicalHeaderKey(h))
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

// exchange is one request as the gate judges it.
type exchange struct {
	body   []byte
	path   string // escaped, as sent upstream
	target client.PendingTarget
	digest string
}

// ServeHTTP judges one request: a grant approved for exactly this request is
// claimed and forwarded once; otherwise the rules allow, deny or ask.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, WaitPrefix) {
		g.serveWait(w, r)
		return
	}
	x, ok := g.read(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	claim, err := g.cfg.Grants.ClaimPending(ctx, x.target)
	if err != nil {
		// Gatehouse unreachable releases nothing; the rules still hold.
		g.log.Warn("gate claim failed", "method", r.Method, "path", x.path, "digest", x.digest, "err", err)
	} else if g.settleClaim(w, r, x, claim) {
		return
	}
	action, rule := g.cfg.Rules.Decide(r.Method, x.path)
	switch action {
	case Allow:
		g.outcome("allowed", r, x, "rule", rule)
		g.forward(w, r, x)
	case Deny:
		g.outcome("denied", r, x, "rule", rule)
		writeError(w, http.StatusForbidden, "gate_denied",
			"The gate's rules refuse this request ("+rule+"). It was not sent. Do not retry it or a variant of it.")
	default:
		g.ask(w, r, x, rule)
	}
}

// settleClaim acts on a claim's answer; false means nothing matched (no_grant)
// and the rules decide.
func (g *Gate) settleClaim(w http.ResponseWriter, r *http.Request, x *exchange, c *client.Claim) bool {
	switch {
	case c.Released:
		g.outcome("released", r, x, "pending_id", c.PendingID, "request_id", c.RequestID)
		g.forward(w, r, x)
	case c.Code == client.ClaimApprovalPending:
		id := pendingID(c.Refusal)
		g.outcome("pending", r, x, "pending_id", id, "filed", false)
		w.Header().Set(WaitHeader, waitURL(r, id))
		handOn(w, c.Refusal)
	case c.Code == client.ClaimApprovalDenied || c.Code == client.ClaimApprovalExpired:
		g.outcome("refused", r, x, "pending_id", pendingID(c.Refusal), "reason", c.Code)
		handOn(w, c.Refusal)
	default:
		return false
	}
	return true
}

// ask files a pending grant and answers the agent at once with what Gatehouse
// wrote for it; nothing is held open while a person decides.
func (g *Gate) ask(w http.ResponseWriter, r *http.Request, x *exchange, rule string) {
	t := x.target
	t.Policy, t.Middleware = rule, Middleware
	f, err := g.cfg.Grants.FilePending(r.Context(), t)
	if err != nil {
		g.log.Error("gate could not file a pending grant", "method", r.Method, "path", x.path, "digest", x.digest, "err", err)
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status == http.StatusBadRequest {
			writeError(w, http.StatusBadRequest, "invalid_input", "Gatehouse cannot bind an approval to this request: "+ce.Detail)
			return
		}
		writeError(w, http.StatusBadGateway, "gatehouse_unavailable",
			"This request needs a person's approval, and the gate could not reach Gatehouse to ask. Nothing was sent.")
		return
	}
	if f.ClaimNow {
		// An operator's rule approved it as it was filed: claim it like a retry.
		c, err := g.cfg.Grants.ClaimPending(r.Context(), x.target)
		if err == nil && g.settleClaim(w, r, x, c) {
			return
		}
		writeError(w, http.StatusBadGateway, "gatehouse_unavailable", "The approval could not be claimed. Nothing was sent.")
		return
	}
	if f.Response == nil {
		writeError(w, http.StatusBadGateway, "gatehouse_unavailable", "Gatehouse gave no answer for the agent. Nothing was sent.")
		return
	}
	if f.Status == "pending" {
		g.outcome("pending", r, x, "pending_id", f.PendingID, "request_id", f.RequestID, "rule", rule, "filed", true)
		w.Header().Set(WaitHeader, waitURL(r, f.PendingID))
	} else {
		g.outcome("refused", r, x, "pending_id", f.PendingID, "request_id", f.RequestID, "rule", rule, "reason", f.Status)
	}
	handOn(w, f.Response.Body)
}

// read bounds and hashes the body and computes the grant's fields.
func (g *Gate) read(w http.ResponseWriter, r *http.Request) (*exchange, bool) {
	max := g.cfg.MaxBody
	if r.ContentLength > max {
		writeTooLarge(w, max)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_input", "The request body could not be read.")
		return nil, false
	}
	if int64(len(body)) > max {
		writeTooLarge(w, max)
		return nil, false
	}
	p := r.URL.EscapedPath()
	if !strings.HasPrefix(p, "/") {
		writeError(w, http.StatusBadRequest, "invalid_input", "The request's path must start with /.")
		return nil, false
	}
	if hasDotSegment(p) {
		// The upstream may resolve them to a path the rules did not judge.
		writeError(w, http.StatusBadRequest, "invalid_input", "The request's path must not contain . or .. segments.")
		return nil, false
	}
	sum := sha256.Sum256(body)
	x := &exchange{body: body, path: g.base + p}
	x.target = client.PendingTarget{Sandbox: g.cfg.Sandbox, Method: r.Method, Host: g.host, Port: g.port,
		Path: x.path, Query: r.URL.RawQuery, BodySHA256: hex.EncodeToString(sum[:])}
	x.digest = Digest(x.target)
	return x, true
}

// hasDotSegment reports a "." or ".." path segment, escaped or not.
func hasDotSegment(escaped string) bool {
	for seg := range strings.SplitSeq(escaped, "/") {
		if seg = strings.ReplaceAll(strings.ToLower(seg), "%2e", "."); seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// Digest is Gatehouse's digest of a grant's request (docs/pending.md), for the
// gate's logs; Gatehouse computes its own.
func Digest(t client.PendingTarget) string {
	s := strings.Join([]string{"v1", t.Sandbox, strings.ToUpper(t.Method), strings.ToLower(t.Host),
		strconv.Itoa(t.Port), t.Path, t.Query, strings.ToLower(t.BodySHA256)}, "\n")
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// outcome logs what the gate did with a request.
func (g *Gate) outcome(what string, r *http.Request, x *exchange, attrs ...any) {
	args := append([]any{"outcome", what, "method", r.Method, "host", g.host, "port", g.port, "path", x.path,
		"query", x.target.Query, "digest", x.digest}, attrs...)
	g.log.Info("gate "+what, args...)
}
