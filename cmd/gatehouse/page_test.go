package main_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/coder/websocket"
	"github.com/gatehousehq/gatehouse/cmd/gatehouse/gatehousetest"
)

// livePage is a websocket client standing in for an operator's open inbox tab
// on one replica: it receives the hub's HTML fragments.
type livePage struct {
	conn *websocket.Conn
}

// openLivePage logs in to s with an operator token (POST /login, as the login
// form does), then opens the page socket at path with the session cookie and
// the server's own Origin, as the browser would. It returns after the first
// message, the full list, so the hub holds the page from then on.
func openLivePage(ctx context.Context, t *testing.T, s *gatehousetest.Server, operatorToken, path string) *livePage {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.PostForm(s.URL()+"/login", url.Values{"token": {operatorToken}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /login: %s, want 303", res.Status)
	}
	header := http.Header{"Origin": {s.URL()}}
	for _, c := range res.Cookies() {
		if c.Name == "gatehouse_session" {
			header.Add("Cookie", c.String())
		}
	}
	if header.Get("Cookie") == "" {
		t.Fatal("login set no gatehouse_session cookie")
	}
	conn, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL(), "http")+path, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		status := "no response"
		if res != nil {
			status = res.Status
		}
		t.Fatalf("dial %s: %v (%s)", path, err, status)
	}
	conn.SetReadLimit(1 << 22)
	t.Cleanup(func() { conn.CloseNow() })
	p := &livePage{conn: conn}
	if doc := p.next(ctx, t); doc.Find("#inbox-list").AttrOr("hx-swap-oob", "") != "true" {
		t.Fatalf("the first message is not the full list: %s", doc.Text())
	}
	return p
}

// next reads one message (the fragments of one or more changes). ctx's
// deadline is the hang guard.
func (p *livePage) next(ctx context.Context, t *testing.T) *goquery.Document {
	t.Helper()
	_, b, err := p.conn.Read(ctx)
	if err != nil {
		t.Fatalf("page read: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// await reads messages until one satisfies ok and returns it; messages about
// other requests are skipped.
func (p *livePage) await(ctx context.Context, t *testing.T, ok func(*goquery.Document) bool) *goquery.Document {
	t.Helper()
	for {
		if doc := p.next(ctx, t); ok(doc) {
			return doc
		}
	}
}
