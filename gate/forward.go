package gate

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

type exchangeKey struct{}

// forward sends exactly the bytes that were judged (method, path, query and
// body) to the upstream and streams its answer back.
func (g *Gate) forward(w http.ResponseWriter, r *http.Request, x *exchange) {
	out := r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x))
	out.Body = io.NopCloser(bytes.NewReader(x.body))
	out.ContentLength = int64(len(x.body))
	out.Header = r.Header.Clone()
	out.Trailer = nil // only judged bytes go upstream: no trailers after the body
	if len(x.body) == 0 {
		out.Body = http.NoBody
	}
	g.proxy.ServeHTTP(w, out)
}

// rewrite points the request at the upstream and swaps the credentials. The
// proxy has already dropped hop-by-hop headers (including any the agent named
// in Connection) and X-Forwarded-*, which stay unset.
func (g *Gate) rewrite(pr *httputil.ProxyRequest) {
	x := pr.In.Context().Value(exchangeKey{}).(*exchange)
	up := g.cfg.Upstream
	unescaped, err := url.PathUnescape(x.path)
	if err != nil {
		unescaped = x.path // EscapedPath gave it; it unescapes
	}
	pr.Out.URL = &url.URL{Scheme: up.Scheme, Host: up.Host, Path: unescaped, RawPath: x.path, RawQuery: x.target.Query}
	pr.Out.Host = up.Host
	for h := range pr.Out.Header {
		if g.dropped(h) {
			pr.Out.Header.Del(h)
		}
	}
	for _, c := range g.cfg.Credentials {
		pr.Out.Header.Set(c.Name, c.Value)
	}
}

// dropped reports a header of the agent's that must not reach the upstream.
// Names are compared with _ read as -, as CGI-style servers read them
// (X_HTTP_Method_Override arrives there as the override).
func (g *Gate) dropped(name string) bool {
	n := headerKey(name)
	if g.strip[n] {
		return true
	}
	for _, p := range overridePrefixes {
		if strings.HasPrefix(n, headerKey(p)) {
			return true
		}
	}
	return false
}

// headerKey is a header name in the form dropped compares.
func headerKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", "-"))
}

// upstreamFailed answers 502 in the standard shape when the upstream cannot be
// reached; an agent that went away is not logged as a failure.
func (g *Gate) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	g.log.Warn("gate upstream failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusBadGateway, "upstream_unavailable", "The gate could not reach the upstream API.")
}
