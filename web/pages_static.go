package web

import (
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/gatehousehq/gatehouse/static"
	"github.com/labstack/echo/v4"
)

// serveStatic serves the embedded assets. A URL carrying the file's current
// content hash (?v=…, as the pages write them) is cached for good; any other
// is revalidated by ETag, and the service worker is never cached.
func (s *Server) serveStatic(c echo.Context) error {
	return s.sendAsset(c, strings.TrimPrefix(path.Clean("/"+c.Param("*")), "/"))
}

// serveServiceWorker is GET /sw.js: the worker must be served from the root so
// its scope is the whole site.
func (s *Server) serveServiceWorker(c echo.Context) error { return s.sendAsset(c, "sw.js") }

func (s *Server) sendAsset(c echo.Context, name string) error {
	hash, ok := s.pages.hashes[name]
	if !ok || strings.HasSuffix(name, ".go") {
		return echo.NewHTTPError(http.StatusNotFound, "no such file")
	}
	b, err := fs.ReadFile(static.FS(), name)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	// A text asset goes gzipped (made once, at startup) to a browser that
	// takes gzip; each form has its own ETag, and caches keep them apart.
	gz, compressible := static.Gzipped(name)
	etag := `"` + hash + `"`
	if compressible {
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		if acceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
			b, etag = gz, `"`+hash+`-gzip"`
			h.Set(echo.HeaderContentEncoding, "gzip")
		}
	}
	h.Set("ETag", etag)
	switch {
	case name == "sw.js":
		h.Set("Cache-Control", "no-cache")
		h.Set("Service-Worker-Allowed", "/")
	case c.QueryParam("v") == hash:
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	default:
		h.Set("Cache-Control", "no-cache")
	}
	if c.Request().Header.Get("If-None-Match") == etag {
		h.Del(echo.HeaderContentEncoding)
		return c.NoContent(http.StatusNotModified)
	}
	ct := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".webmanifest":
		ct = "application/manifest+json"
	case ".js":
		ct = "text/javascript; charset=utf-8"
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	return c.Blob(http.StatusOK, ct, b)
}

// acceptsGzip reads Accept-Encoding: gzip is taken unless absent or refused
// with q=0.
func acceptsGzip(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return err == nil && q > 0
			}
		}
		return true
	}
	return false
}
