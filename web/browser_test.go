package web_test

import (
	"context"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"github.com/chromedp/chromedp"
)

const chromiumPath = "/usr/bin/chromium"

// needChromium skips without Chromium, except under CI, which must run every test.
func needChromium(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium is missing at %s (CI must run the browser tests; .ci/run installs it)", chromiumPath)
		}
		testkit.Skipf(t, "Chromium is missing at %s: install Debian's chromium to run the browser tests", chromiumPath)
	}
}

// tab is one browser (its own profile) driving the page, recording every
// console error, uncaught exception and error log entry (a CSP violation is one).
type tab struct {
	t      testing.TB
	ctx    context.Context
	mu     sync.Mutex
	errors []string
	marks  chan string // console.info lines marked "gatehouse-mark:", in order
}

func newBrowser(t testing.TB, width, height int) *tab {
	t.Helper()
	needChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-default-browser-check", true),
		// Notifications go to Chromium's own message center, not a desktop
		// notification daemon the test machine does not run.
		chromedp.Flag("disable-features", "NativeNotifications"),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		wg.Wait()
	})
	// The first run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	// Chromium keeps a window at least 500 px wide: the viewport is set
	// exactly, and a narrow one is a phone (mobile, touch).
	vp := []chromedp.EmulateViewportOption{chromedp.EmulatePortrait}
	if width < 600 {
		vp = append(vp, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	b := watch(t, ctx, &wg)
	b.run("viewport", chromedp.EmulateViewport(int64(width), int64(height), vp...))
	return b
}

// watch records the console of the target of ctx (a page or a worker) as a tab.
func watch(t testing.TB, ctx context.Context, wg *sync.WaitGroup) *tab {
	b := &tab{t: t, ctx: ctx, marks: make(chan string, 16)}
	messages := chromedp.Console(ctx)
	wg.Go(func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if mark, ok := strings.CutPrefix(m.Text, "gatehouse-mark:"); ok {
				b.marks <- mark
				continue
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.record(fmt.Sprintf("%s [%s] %s", m, m.Source, m.URL))
			}
		}
	})
	return b
}

func (b *tab) record(s string) {
	b.mu.Lock()
	b.errors = append(b.errors, s)
	b.mu.Unlock()
}

// flush waits until every console message the page wrote so far has been
// recorded: messages arrive in order, so a marker written now comes after them.
func (b *tab) flush() {
	b.t.Helper()
	mark := fmt.Sprint(time.Now().UnixNano())
	value(b, "mark", chromedp.Evaluate[bool](`console.info("gatehouse-mark:`+mark+`"); true`))
	ctx, cancel := b.bounded()
	defer cancel()
	for {
		select {
		case got := <-b.marks:
			if got == mark {
				return
			}
		case <-ctx.Done():
			b.t.Fatal("the console marker never arrived")
		}
	}
}

// consoleErrors returns what the page logged as errors, less the browser's
// network line for the refused (409) stale decision the test makes on purpose.
func (b *tab) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.errors {
		if strings.Contains(e, "[network]") && strings.Contains(e, "409") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// stepTimeout bounds every step a browser test waits on.
const stepTimeout = 20 * time.Second

// viewports are the screens every page test runs on: a phone and a laptop.
var viewports = []struct {
	name string
	w, h int
}{{"phone", 390, 844}, {"desktop", 1280, 800}}

// bounded is the tab's context with a bound for one step.
func (b *tab) bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, stepTimeout)
}

// run runs steps with a bound, failing the test with what the step was.
func (b *tab) run(step string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v (console: %v)", step, err, b.consoleErrors())
	}
}

// value runs one action that answers a value.
func value[T any](b *tab, step string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
	return v
}

// login logs the browser in through the form and waits for the live socket.
func (b *tab) login(e *pageEnv) {
	b.t.Helper()
	b.run("log in",
		chromedp.Navigate(e.url+"/login"),
		chromedp.WaitVisible(css(`input[name="token"]`)),
		chromedp.SendKeys(css(`input[name="token"]`), e.opToken),
		chromedp.Click(css(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="filters"]`)),
		chromedp.WaitReady(css(`body.live`)),
	)
}

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

func card(id string) chromedp.CSS { return css("#req-" + id) }

func option(id, opt string) chromedp.CSS {
	return css(fmt.Sprintf(`#req-%s button[data-option="%s"]`, id, opt))
}

func TestBrowser(t *testing.T) {
	needChromium(t)
	e := startPage(t, "sqlite")
	laptop := newBrowser(t, 1100, 900)
	phone := newBrowser(t, 390, 844)
	laptop.login(e)
	phone.login(e)

	t.Run("a request filed through the API appears without a reload", func(t *testing.T) {
		r := e.file("Run the test suite")
		for _, b := range []*tab{laptop, phone} {
			b.run("card appears", chromedp.WaitVisible(option(r.ID, "once")))
		}
		title := value(laptop, "title", chromedp.Title())
		if title != "(1) Gatehouse" {
			t.Fatalf("title = %q", title)
		}
	})

	t.Run("a click releases the waiting call with that decision, and the other browser sees it resolve", func(t *testing.T) {
		r := e.file("Push to main", func(n *api.NewRequest) { n.Command = "git push origin main" })
		phone.run("card appears", chromedp.WaitVisible(option(r.ID, "deny")))
		laptop.run("card appears", chromedp.WaitVisible(option(r.ID, "deny")))
		waited := make(chan *api.Wait, 1)
		waitErr := make(chan error, 1)
		go func() {
			got, err := e.agent.Wait(context.Background(), r.ID, 60*time.Second)
			if err != nil {
				waitErr <- err
				return
			}
			waited <- got
		}()
		phone.run("decide", chromedp.Click(option(r.ID, "deny")))
		select {
		case got := <-waited:
			if got.Decision == nil || *got.Decision != "deny" || got.TimedOut {
				t.Fatalf("wait answered %+v", got)
			}
		case err := <-waitErr:
			t.Fatal(err)
		case <-time.After(20 * time.Second):
			t.Fatal("the waiting call was not released")
		}
		laptop.run("resolved live on the other browser", chromedp.WaitNotPresent(card(r.ID)))
		phone.run("resolved on the deciding browser", chromedp.WaitNotPresent(card(r.ID)),
			chromedp.WaitVisible(css(`#flash [data-testid="notice"][data-kind="ok"]`)))
	})

	t.Run("a stale click shows the conflict", func(t *testing.T) {
		r := e.file("Delete the cache")
		phone.run("card appears", chromedp.WaitVisible(option(r.ID, "once")))
		laptop.run("card appears", chromedp.WaitVisible(option(r.ID, "once")))
		// Freeze the phone's page: it ignores the socket from now on, as a
		// phone that slept through the decision would show the old card.
		value(phone, "freeze", chromedp.Evaluate[bool](`document.body.addEventListener("htmx:wsBeforeMessage", function (e) { e.preventDefault(); }); true`))
		laptop.run("decide", chromedp.Click(option(r.ID, "once")), chromedp.WaitNotPresent(card(r.ID)))
		phone.run("stale click",
			chromedp.Click(option(r.ID, "deny")),
			chromedp.WaitVisible(css(`#flash [data-testid="notice"][data-kind="conflict"]`)))
		text := value(phone, "notice", chromedp.Text(css(`#flash [data-testid="notice"]`)))
		if !strings.Contains(text, "Decided elsewhere") || !strings.Contains(text, "Allow once") {
			t.Fatalf("notice = %q", text)
		}
		got, err := e.agent.Get(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if *got.Decision != "once" {
			t.Fatalf("the stale click overrode the decision: %s", *got.Decision)
		}
	})

	t.Run("an answer and a note typed on the page reach the agent", func(t *testing.T) {
		r := e.file("Which branch?", func(n *api.NewRequest) {
			n.Kind, n.AllowAnswer, n.Options = "question", true, []api.Option{{ID: "main", Label: "main"}}
		})
		form := "#req-" + r.ID + " "
		laptop.run("answer",
			chromedp.WaitVisible(css(form+`textarea[name="answer"]`)),
			chromedp.SendKeys(css(form+`textarea[name="answer"]`), "release/2.4"),
			chromedp.Click(css(form+`details summary`)),
			chromedp.WaitVisible(css(form+`textarea[name="note"]`)),
			chromedp.SendKeys(css(form+`textarea[name="note"]`), "and tag it"),
			chromedp.Click(css(form+`[data-testid="send-answer"]`)),
			chromedp.WaitNotPresent(card(r.ID)),
		)
		got, err := e.agent.Wait(context.Background(), r.ID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got.Answer == nil || *got.Answer != "release/2.4" || got.Note == nil || *got.Note != "and tag it" || got.Decision != nil {
			t.Fatalf("record = decision %v answer %v note %v", got.Decision, got.Answer, got.Note)
		}
	})

	t.Run("a reconnecting page resyncs", func(t *testing.T) {
		phone.run("reload", chromedp.Reload(), chromedp.WaitReady(css(`body.live`)))
		// Requests filed while the socket is down are on the page once it is back:
		// the server sends the whole list on every connect.
		r := e.file("Filed meanwhile")
		phone.run("card appears", chromedp.WaitVisible(card(r.ID)))
	})

	t.Run("no console errors", func(t *testing.T) {
		for name, b := range map[string]*tab{"laptop": laptop, "phone": phone} {
			b.flush()
			if errs := b.consoleErrors(); len(errs) > 0 {
				t.Errorf("%s logged errors: %v", name, errs)
			}
		}
	})

}

func (e *pageEnv) listOpen() []api.Request {
	var out struct {
		Requests []api.Request `json:"requests"`
	}
	if err := e.operator.Do(context.Background(), "GET", "/v1/requests?status=open", nil, nil, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Requests
}
