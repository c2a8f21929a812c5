package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/PuerkitoBio/goquery"
	"github.com/coder/websocket"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"go.uber.org/goleak"
)

// page is a websocket client standing in for a browser tab.
type page struct {
	t    testing.TB
	conn *websocket.Conn
}

func (e *pageEnv) dial(b *http.Client, path string, header http.Header) (*websocket.Conn, *http.Response, error) {
	u, _ := url.Parse(e.url)
	if header == nil {
		header = http.Header{}
	}
	if header.Get("Origin") == "" {
		header.Set("Origin", e.url)
	}
	if b != nil {
		for _, c := range b.Jar.Cookies(u) {
			header.Add("Cookie", c.String())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+path, &websocket.DialOptions{HTTPHeader: header})
}

// openPage connects a logged-in browser's page to the hub.
func (e *pageEnv) openPage(b *http.Client, path string) *page {
	e.t.Helper()
	conn, _, err := e.dial(b, path, nil)
	if err != nil {
		e.t.Fatalf("dial %s: %v", path, err)
	}
	conn.SetReadLimit(1 << 22)
	e.t.Cleanup(func() { conn.CloseNow() })
	return &page{t: e.t, conn: conn}
}

// next reads one message (the fragments of one change) as a document.
func (p *page) next() *goquery.Document {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := p.conn.Read(ctx)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(b))
	if err != nil {
		p.t.Fatal(err)
	}
	return doc
}

// say sends the server a message as the page's script does.
func (p *page) say(msg string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		p.t.Fatal(err)
	}
}

func oob(doc *goquery.Document, sel string) string {
	return doc.Find(sel).AttrOr("hx-swap-oob", "")
}

func count(doc *goquery.Document) string { return doc.Find("#open-count").AttrOr("data-count", "") }

func TestHubAdmits(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	for name, tc := range map[string]struct {
		b      *http.Client
		header http.Header
		want   int
	}{
		"no session":     {nil, nil, http.StatusUnauthorized},
		"agent token":    {nil, http.Header{"Authorization": {"Bearer " + e.agent.Token}}, http.StatusForbidden},
		"foreign origin": {b, http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		// The host alone matched before: another scheme or port is another origin.
		"other scheme":    {b, http.Header{"Origin": {"https" + strings.TrimPrefix(e.url, "http")}}, http.StatusForbidden},
		"other port":      {b, http.Header{"Origin": {"http://" + strings.Split(strings.TrimPrefix(e.url, "http://"), ":")[0] + ":1"}}, http.StatusForbidden},
		"bad filter":      {b, nil, http.StatusBadRequest},
		"operator's page": {b, nil, http.StatusSwitchingProtocols},
	} {
		t.Run(name, func(t *testing.T) {
			path := "/ws?status=open"
			if name == "bad filter" {
				path = "/ws?status=bogus"
			}
			conn, res, err := e.dial(tc.b, path, tc.header)
			if conn != nil {
				conn.CloseNow()
			}
			if res == nil {
				t.Fatalf("no response: %v", err)
			}
			if res.StatusCode != tc.want {
				t.Fatalf("status = %d, want %d (%v)", res.StatusCode, tc.want, err)
			}
		})
	}
}

func TestHubFragments(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	first := e.file("Run the tests")

	open := e.openPage(b, "/ws?status=open")
	resolved := e.openPage(b, "/ws?status=resolved")
	detail := e.openPage(b, "/ws?id="+first.ID)

	t.Run("a page gets its whole list on connect", func(t *testing.T) {
		doc := open.next()
		if oob(doc, "#inbox-list") != "true" || doc.Find("#inbox-list #req-"+first.ID).Length() != 1 || count(doc) != "1" {
			t.Fatalf("sync = %s", doc.Text())
		}
		if doc := resolved.next(); doc.Find("#inbox-list [data-testid=card]").Length() != 0 {
			t.Fatal("resolved page lists an open request")
		}
		doc = detail.next()
		if doc.Find("#inbox-list #req-"+first.ID+" h1").Length() != 1 {
			t.Fatal("request page sync lacks its card")
		}
		if oob(doc, "#audit-"+first.ID) != "true" || doc.Find(`#audit-`+first.ID+` [data-action="create"]`).Length() != 1 {
			t.Fatal("request page sync lacks its trail")
		}
	})

	second := e.file("Push it", func(n *api.NewRequest) { n.Risk = "low" })
	t.Run("a new request is inserted at the top", func(t *testing.T) {
		doc := open.next()
		if oob(doc, "div[hx-swap-oob]") != "afterbegin:#inbox-list" || doc.Find("#req-"+second.ID).Length() != 1 || count(doc) != "2" {
			t.Fatalf("insert = %q", doc.Text())
		}
		if doc := resolved.next(); doc.Find("[data-testid=card]").Length() != 0 || count(doc) != "2" {
			t.Fatal("resolved page got an open card")
		}
		if doc := detail.next(); doc.Find("[data-testid=card]").Length() != 0 || count(doc) != "2" {
			t.Fatal("request page got another request's card")
		}
	})

	if _, err := e.operator.Decide(context.Background(), first.ID, first.Version, "once", ""); err != nil {
		t.Fatal(err)
	}
	t.Run("a decided request leaves the open page and joins the resolved one", func(t *testing.T) {
		doc := open.next()
		if oob(doc, "#req-"+first.ID) != "delete" || count(doc) != "1" {
			t.Fatalf("open page = %q", doc.Text())
		}
		doc = resolved.next()
		if oob(doc, "div[hx-swap-oob]") != "afterbegin:#inbox-list" || doc.Find("#req-"+first.ID).AttrOr("data-status", "") != "resolved" {
			t.Fatal("resolved page did not get the card")
		}
		doc = detail.next()
		c := doc.Find("#req-" + first.ID)
		if oob(doc, "#req-"+first.ID) != "true" || c.AttrOr("data-status", "") != "resolved" || c.Find("button").Length() != 0 {
			t.Fatal("request page card not redrawn as resolved")
		}
		// The trail travels with it: the decide row appears without a reload.
		row := doc.Find(`#audit-` + first.ID + ` [data-testid="audit-row"][data-action="decide"]`)
		if oob(doc, "#audit-"+first.ID) != "true" || row.Length() != 1 {
			t.Fatalf("request page trail not redrawn: %q", doc.Find("#audit-"+first.ID).Text())
		}
		if got := row.Find(`[data-testid="audit-detail"] dt`).First().Text(); got != "decision" {
			t.Errorf("decide detail starts with %q, want readable key/value lines", got)
		}
	})

	t.Run("presence", func(t *testing.T) {
		if got := e.srv.OperatorsOnline(); len(got) != 1 || got[0] != "operator:ann" || !e.srv.ActiveOperators() {
			t.Fatalf("online = %v", got)
		}
		if got := e.srv.ConnectedPages(); got != 3 {
			t.Fatalf("pages = %d", got)
		}
		// Pages in the background do not count as someone looking.
		for _, p := range []*page{open, resolved, detail} {
			p.say(`{"visible": false}`)
			if doc := p.next(); doc.Find("#presence").AttrOr("data-visible", "") != "false" {
				t.Fatalf("ack = %q", doc.Text())
			}
		}
		if e.srv.ActiveOperators() || e.srv.ConnectedPages() != 3 {
			t.Fatalf("hidden pages count as present: %v", e.srv.OperatorsOnline())
		}
		open.say(`{"visible": true}`)
		open.next()
		if !e.srv.ActiveOperators() {
			t.Fatal("a visible page is not counted")
		}
	})
}

func TestHubDropsSlowPage(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	stuck := e.openPage(b, "/ws?status=open")
	stuck.next() // its list: the hub has it. From now on it never reads, and its buffers fill.
	live := e.openPage(b, "/ws?status=open")
	live.next()
	big := strings.Repeat("x", 28*1024) // twice: command and detail are each capped at 32 KiB
	filed := 0
	for ; e.srv.ConnectedPages() > 1; filed++ {
		if filed == 2000 {
			t.Fatal("the stuck page was never dropped")
		}
		r := e.file("Big", func(n *api.NewRequest) { n.Command, n.Detail = big, big })
		// The live page gets every change at once: the stuck one slows nothing.
		if doc := live.next(); doc.Find("#req-"+r.ID).Length() != 1 {
			t.Fatalf("live page missed %s", r.ID)
		}
	}
	t.Logf("the stuck page was dropped after %d requests", filed)
	// The dropped page's socket ends; the browser reconnects and resyncs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if _, _, err := stuck.conn.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Fatal("the dropped page's socket is still open")
			}
			break
		}
	}
	again := e.openPage(b, "/ws?status=open")
	if doc := again.next(); doc.Find("#inbox-list [data-testid=card]").Length() == 0 {
		t.Fatal("reconnect did not resync")
	}
}

func TestHubStopsWithServer(t *testing.T) {
	// The database closes in t.Cleanup, after this check.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
	st, changes := storetest.Store(t, "sqlite")
	ts := httptest.NewUnstartedServer(nil)
	srv, err := web.New(web.Config{BaseURL: "http://" + ts.Listener.Addr().String()}, web.Deps{Store: st, Watcher: changes})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler()
	ts.Start()
	_, op, err := st.CreateToken(context.Background(), models.RoleOperator, "ann")
	if err != nil {
		t.Fatal(err)
	}
	_, cookie, err := st.LoginWithToken(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{"Origin": {ts.URL}, "Cookie": {web.SessionCookie + "=" + cookie}}
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws?status=open", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	// The page is told to come back later (1012), which makes htmx reconnect.
	_, _, err = conn.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusServiceRestart {
		t.Fatalf("close status = %v (%v)", got, err)
	}
	conn.CloseNow()
	ts.Close()
}

func TestHubResyncsAfterLagging(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	p := e.openPage(b, "/ws?status=open")
	p.next()
	// A flood of announcements far beyond the hub's buffer: the fan-out drops
	// the hub, which must subscribe again and send every page its list afresh.
	// (The announced id matches no request, so only the resync reaches the page.)
	for i := 0; i < 20000; i++ {
		e.changes.Announce(models.Change{RequestID: "req_flood", Version: i, Status: "open", Action: "edit"})
	}
	r := e.file("Filed after the flood")
	// Changes the hub took from its buffer before it noticed may come first;
	// then the resync (next fails the test if it never comes).
	doc := p.next()
	for oob(doc, "#inbox-list") != "true" {
		doc = p.next()
	}
	// The hub is live again: the new card arrives (in the resync or after it).
	for doc.Find("#req-"+r.ID).Length() == 0 {
		doc = p.next()
	}
}

func TestHubResyncsOnFeedReconnect(t *testing.T) {
	e := startPage(t, "sqlite")
	b := e.browser()
	e.login(b)
	p := e.openPage(b, "/ws?status=open")
	p.next()
	// A request committed while the cross-replica feed was down: stored, but
	// its announcement never arrived here.
	agent, _, err := e.store.CreateToken(context.Background(), models.RoleAgent, "gap")
	if err != nil {
		t.Fatal(err)
	}
	silent := *e.store
	silent.Announcer = nil
	r, _, err := silent.CreateRequest(context.Background(), agent.Principal(), models.NewRequest{
		Title: "Filed in the gap", Options: []models.Option{{ID: "ok", Label: "OK", Effect: "allow"}},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	e.changes.Resync() // the feed is back: the hub must send the list afresh
	doc := p.next()
	if oob(doc, "#inbox-list") != "true" || doc.Find("#req-"+r.ID).Length() != 1 {
		t.Fatalf("no resync with the request filed in the gap: %s", doc.Text())
	}
}
