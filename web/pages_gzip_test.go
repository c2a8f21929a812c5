package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/hookanswer"
	"github.com/gatehousehq/gatehouse/static"
)

// raw sends a call with exactly the Accept-Encoding given (Go's transport
// adds and undoes gzip by itself otherwise) and answers the status, headers
// and body as sent.
func (e *pageEnv) raw(b *http.Client, method, path, acceptEncoding string, header http.Header, body io.Reader) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if b != nil {
		c.Jar = b.Jar
	}
	defer c.CloseIdleConnections()
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res, out
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPageGzip(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	for i := range 12 {
		e.file("Run the suite, part "+string(rune('a'+i)), func(n *api.NewRequest) { n.SourceRef = map[string]string{"session": "s-gzip", "cwd": "/srv/app"} })
	}
	html := http.Header{"Accept": {"text/html"}}

	t.Run("a page goes gzipped to a browser that takes it, plain to one that does not", func(t *testing.T) {
		for path, b := range map[string]*http.Client{"/": b, "/system": b, "/requests/" + e.listOpen()[0].ID: b, "/login": nil} {
			plain, body := e.raw(b, "GET", path, "identity", html, nil)
			if plain.StatusCode != 200 || plain.Header.Get("Content-Encoding") != "" {
				t.Fatalf("%s without gzip: %d %q", path, plain.StatusCode, plain.Header.Get("Content-Encoding"))
			}
			res, gz := e.raw(b, "GET", path, "gzip, deflate, br", html, nil)
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
				t.Fatalf("%s: %d, Content-Encoding %q, Vary %q", path, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
			}
			got := gunzip(t, gz)
			if !strings.Contains(string(got), "</html>") || len(got) < len(body)-200 || len(got) > len(body)+200 {
				t.Fatalf("%s: %d bytes gzipped to %d, unpacked to %d", path, len(body), len(gz), len(got))
			}
			t.Logf("%s: %d bytes, %d gzipped", path, len(body), len(gz))
			if refused, _ := e.raw(b, "GET", path, "gzip;q=0, identity", html, nil); refused.Header.Get("Content-Encoding") != "" {
				t.Errorf("%s: gzip;q=0 answered %q", path, refused.Header.Get("Content-Encoding"))
			}
		}
	})

	t.Run("static assets go gzipped, made ahead, each form with its own ETag", func(t *testing.T) {
		for _, name := range append(static.Scripts(), "app.css", "manifest.webmanifest", "icons/icon.svg") {
			want, err := fs.ReadFile(static.FS(), name)
			if err != nil {
				t.Fatal(err)
			}
			res, gz := e.raw(nil, "GET", "/static/"+name, "gzip", nil, nil)
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
				t.Fatalf("%s: %d, Content-Encoding %q, Vary %q", name, res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
			}
			if !bytes.Equal(gunzip(t, gz), want) {
				t.Fatalf("%s: gzipped form differs from the file", name)
			}
			t.Logf("%s: %d bytes, %d gzipped", name, len(want), len(gz))
			plain, body := e.raw(nil, "GET", "/static/"+name, "identity", nil, nil)
			if plain.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
				t.Fatalf("%s without gzip: %q, %d bytes", name, plain.Header.Get("Content-Encoding"), len(body))
			}
			if plain.Header.Get("ETag") == res.Header.Get("ETag") {
				t.Errorf("%s: both forms have ETag %s", name, plain.Header.Get("ETag"))
			}
			again, body := e.raw(nil, "GET", "/static/"+name, "gzip", http.Header{"If-None-Match": {res.Header.Get("ETag")}}, nil)
			if again.StatusCode != http.StatusNotModified || len(body) != 0 || again.Header.Get("Content-Encoding") != "" {
				t.Errorf("%s revalidated: %d, %d bytes, %q", name, again.StatusCode, len(body), again.Header.Get("Content-Encoding"))
			}
		}
		if res, _ := e.raw(nil, "GET", "/static/icons/icon-192.png", "gzip", nil, nil); res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" {
			t.Errorf("a PNG: %d %q", res.StatusCode, res.Header.Get("Content-Encoding"))
		}
	})

	t.Run("a long-poll is never gzipped or held back", func(t *testing.T) {
		r := e.file("Wait for me")
		type answer struct {
			res  *http.Response
			body []byte
		}
		got := make(chan answer, 1)
		started := make(chan struct{})
		go func() {
			close(started)
			res, body := e.raw(nil, "GET", "/v1/requests/"+r.ID+"/wait?timeout=30", "gzip",
				http.Header{"Authorization": {"Bearer " + e.agent.Token}}, nil)
			got <- answer{res, body}
		}()
		<-started
		if _, err := e.operator.Decide(context.Background(), r.ID, r.Version, "deny", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case a := <-got:
			var w api.Wait
			if a.res.StatusCode != 200 || a.res.Header.Get("Content-Encoding") != "" || json.Unmarshal(a.body, &w) != nil || w.Decision == nil || *w.Decision != "deny" {
				t.Fatalf("wait: %d %q %s", a.res.StatusCode, a.res.Header.Get("Content-Encoding"), a.body)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the wait did not answer the decision")
		}
	})

	t.Run("the API, MCP and the hook route answer plain", func(t *testing.T) {
		bearer := func(h http.Header) http.Header { h.Set("Authorization", "Bearer "+e.agent.Token); return h }
		res, body := e.raw(nil, "GET", "/v1/requests?limit=50", "gzip", bearer(http.Header{}), nil)
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || len(body) < 1024 {
			t.Errorf("GET /v1/requests: %d %q, %d bytes", res.StatusCode, res.Header.Get("Content-Encoding"), len(body))
		}
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		res, body = e.raw(nil, "POST", "/mcp", "gzip", bearer(http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}), strings.NewReader(init))
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || !strings.Contains(string(body), "serverInfo") {
			t.Errorf("POST /mcp: %d %q %s", res.StatusCode, res.Header.Get("Content-Encoding"), body)
		}
		// A refused token answers at once with the hook's own "ask".
		res, body = e.raw(nil, "POST", "/v1/hooks/claude-code", "gzip", http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer not-a-token"}},
			bytes.NewReader(hookInput(t, hookanswer.EventPreToolUse, "ls")))
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || !strings.Contains(string(body), "ask") {
			t.Errorf("POST /v1/hooks/claude-code: %d %q %s", res.StatusCode, res.Header.Get("Content-Encoding"), body)
		}
	})

	t.Run("the websocket opens and speaks plain with gzip offered", func(t *testing.T) {
		conn, res, err := e.dial(b, "/ws?status=open", http.Header{"Accept-Encoding": {"gzip"}})
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer conn.CloseNow()
		if res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Content-Encoding") != "" {
			t.Fatalf("handshake: %d %q", res.StatusCode, res.Header.Get("Content-Encoding"))
		}
		p := &page{t: t, conn: conn}
		conn.SetReadLimit(1 << 22)
		if doc := p.next(); doc.Find(`#inbox-list [data-testid="card"]`).Length() < 12 {
			t.Fatal("the list on connect is not readable")
		}
	})
}
