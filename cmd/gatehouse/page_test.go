package main_test

import (
	"bytes"
	"context"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
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

const chromiumPath = "/usr/bin/chromium"

// openBrowser starts a headless Chromium (flags as web's browser tests) and
// logs it in to s through the login form, returning once the inbox's live
// socket is open. Without Chromium it skips, except under CI, which must run
// every test.
func openBrowser(t *testing.T, s *gatehousetest.Server, operatorToken string) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium is missing at %s (CI must run the browser tests)", chromiumPath)
		}
		testkit.Skipf(t, "Chromium is missing at %s: install Debian's chromium to run the browser tests", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	browse(t, ctx, "log in",
		chromedp.Navigate(s.URL()+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), operatorToken),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="filters"]`)),
		chromedp.WaitReady(chromedp.CSS(`body.live`)),
	)
	return ctx
}

// browse runs browser steps under a hang guard, failing with the step's name.
func browse(t *testing.T, ctx context.Context, step string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, releaseGuard)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}
