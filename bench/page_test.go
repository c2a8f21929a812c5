// Package bench measures how fast the operator's page learns of a change.
//
//	go test -run '^$' -bench Page -benchtime 200x ./bench/
package bench_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

type server struct {
	store   *store.Store
	srv     *web.Server
	url     string // where the server listens
	cookie  string
	opToken string
	agent   models.Principal
}

func start(b *testing.B) *server {
	b.Helper()
	// The production assembly (app.New through webtest), as serve runs it.
	env := webtest.New(b, "sqlite", web.Config{})
	st, srv := env.Store, env.Server
	ctx := context.Background()
	_, op, err := st.CreateToken(ctx, models.RoleOperator, "ann")
	if err != nil {
		b.Fatal(err)
	}
	_, cookie, err := st.LoginWithToken(ctx, op)
	if err != nil {
		b.Fatal(err)
	}
	ag, _, err := st.CreateToken(ctx, models.RoleAgent, "claude")
	if err != nil {
		b.Fatal(err)
	}
	return &server{store: st, srv: srv, url: env.URL, cookie: cookie, opToken: op, agent: ag.Principal()}
}

func (s *server) file(b *testing.B, i int) *models.Request {
	r, _, err := s.store.CreateRequest(context.Background(), s.agent, models.NewRequest{
		Kind: "permission", Title: fmt.Sprintf("Run step %d", i), Summary: "The agent wants to run a command",
		Tool: "Bash", Command: "go test ./...", Risk: "high",
		Options: []models.Option{{ID: "once", Label: "Allow once", Effect: "allow"}, {ID: "deny", Label: "Deny", Effect: "deny"}},
	}, "")
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func (s *server) decide(b *testing.B, r *models.Request) {
	if _, err := s.srv.DecideAs(context.Background(), r.ID, models.Decision{Version: r.Version, Option: "once", By: "operator:ann", Via: models.ViaPage}); err != nil {
		b.Fatal(err)
	}
}

// pages are n plain websocket clients standing in for browser tabs on the open
// inbox. Each reports when a message carrying a marker reaches it.
type pages struct {
	mu      sync.Mutex
	want    []byte
	arrived chan time.Time
	wg      sync.WaitGroup
}

func connect(b *testing.B, s *server, n int) *pages {
	b.Helper()
	p := &pages{arrived: make(chan time.Time, n)}
	ctx, cancel := context.WithCancel(context.Background())
	url := "ws" + strings.TrimPrefix(s.url, "http") + "/ws?status=open"
	h := http.Header{"Origin": {s.url}, "Cookie": {web.SessionCookie + "=" + s.cookie}}
	for range n {
		conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			b.Fatal(err)
		}
		conn.SetReadLimit(1 << 24)
		if _, _, err := conn.Read(ctx); err != nil { // the sync on connect
			b.Fatal(err)
		}
		p.wg.Go(func() {
			defer conn.CloseNow()
			for {
				_, msg, err := conn.Read(ctx)
				if err != nil {
					return
				}
				p.mu.Lock()
				hit := p.want != nil && bytes.Contains(msg, p.want)
				p.mu.Unlock()
				if hit {
					p.arrived <- time.Now()
				}
			}
		})
	}
	b.Cleanup(func() {
		cancel()
		p.wg.Wait()
	})
	return p
}

func (p *pages) expect(marker string) {
	p.mu.Lock()
	p.want = []byte(marker)
	p.mu.Unlock()
}

// all waits until every page reported, and returns each page's delay after t0.
func (p *pages) all(b *testing.B, n int, t0 time.Time) []time.Duration {
	out := make([]time.Duration, 0, n)
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for range n {
		select {
		case at := <-p.arrived:
			out = append(out, at.Sub(t0))
		case <-timeout.C:
			b.Fatalf("only %d of %d pages got the change", len(out), n)
		}
	}
	return out
}

// report adds the median and the 99th percentile of "first page" and "last
// page" delays, in milliseconds.
func report(b *testing.B, first, last []time.Duration) {
	pct := func(d []time.Duration, q float64) float64 {
		slices.Sort(d)
		return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(first, .5), "ms-first-p50")
	b.ReportMetric(pct(last, .5), "ms-last-p50")
	b.ReportMetric(pct(last, .99), "ms-last-p99")
}

// BenchmarkPageWebsocket: from a request's commit to its card fragment reaching
// every connected page, and from a decision's commit to every page getting the
// card's removal — with 1 and 200 pages connected.
func BenchmarkPageWebsocket(b *testing.B) {
	for _, n := range []int{1, 200} {
		b.Run(fmt.Sprintf("pages=%d/commit-to-card", n), func(b *testing.B) {
			s := start(b)
			p := connect(b, s, n)
			var first, last []time.Duration
			for i := 0; i < b.N; i++ {
				marker := fmt.Sprintf(`>Run step %d<`, i)
				p.expect(marker)
				s.file(b, i)
				t0 := time.Now() // CreateRequest returns right after its commit and announcement
				d := p.all(b, n, t0)
				slices.Sort(d)
				first, last = append(first, d[0]), append(last, d[len(d)-1])
			}
			report(b, first, last)
		})
		b.Run(fmt.Sprintf("pages=%d/decide-to-every-page", n), func(b *testing.B) {
			s := start(b)
			p := connect(b, s, n)
			var first, last []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p.expect(fmt.Sprintf(`>Run step %d<`, i))
				r := s.file(b, i)
				p.all(b, n, time.Now())
				b.StartTimer()
				p.expect(`id="req-` + r.ID + `" hx-swap-oob="delete"`)
				t0 := time.Now()
				s.decide(b, r)
				d := p.all(b, n, t0)
				slices.Sort(d)
				first, last = append(first, d[0]), append(last, d[len(d)-1])
			}
			report(b, first, last)
		})
	}
}

// observe records, in the page, the wall-clock time (Date.now(): the system
// clock Go reads too, to the millisecond) at which each card enters and leaves
// the DOM, and lets the benchmark await one.
const observe = `window.__seen = {}; window.__gone = {}; window.__waiters = [];
new MutationObserver(function (muts) {
  var now = Date.now();
  var cards = function (n) { return n.nodeType !== 1 ? [] : (n.matches("[data-request-id]") ? [n] : Array.from(n.querySelectorAll("[data-request-id]"))); };
  muts.forEach(function (m) {
    m.addedNodes.forEach(function (n) { cards(n).forEach(function (c) { var id = c.getAttribute("data-request-id"); if (!(id in __seen)) __seen[id] = now; }); });
    m.removedNodes.forEach(function (n) { cards(n).forEach(function (c) { var id = c.getAttribute("data-request-id"); if (!document.getElementById("req-" + id) && !(id in __gone)) __gone[id] = now; }); });
  });
  __waiters = __waiters.filter(function (w) { return !w(); });
}).observe(document.body, {childList: true, subtree: true});
window.__wait = function (map, id) { return new Promise(function (res) { var f = function () { if (id in map) { res(map[id]); return true; } return false; }; if (!f()) __waiters.push(f); }); };
true`

// BenchmarkPageBrowser: the same two delays with one real Chromium page: from
// a request's commit until its card is in the DOM, and from a decision's commit
// until the card is gone from it.
func BenchmarkPageBrowser(b *testing.B) {
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		b.Skip("Chromium is missing at /usr/bin/chromium")
	}
	s := start(b)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath("/usr/bin/chromium"), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(b.TempDir()))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/login"),
		chromedp.SendKeys(css(`input[name="token"]`), s.opToken),
		chromedp.Click(css(`[data-testid="login-submit"]`)),
		chromedp.WaitReady(css("body.live")),
	)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](observe)); err != nil {
		b.Fatal(err)
	}
	wait := func(m, id string) time.Time {
		at, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(`__wait(%s, %q)`, m, id), chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		return time.Unix(0, int64(at*1e6))
	}
	var toCard, toGone []time.Duration
	for i := 0; i < b.N; i++ {
		r := s.file(b, i)
		t0 := time.Now()
		toCard = append(toCard, wait("__seen", r.ID).Sub(t0))
		t0 = time.Now()
		s.decide(b, r)
		toGone = append(toGone, wait("__gone", r.ID).Sub(t0))
	}
	pct := func(d []time.Duration, q float64) float64 {
		slices.Sort(d)
		return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(toCard, .5), "ms-card-p50")
	b.ReportMetric(pct(toCard, .99), "ms-card-p99")
	b.ReportMetric(pct(toGone, .5), "ms-gone-p50")
	b.ReportMetric(pct(toGone, .99), "ms-gone-p99")
}
