package conformance_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// page is the operator's page as a browser uses it: a login with the
// operator's token, the request's card, its form posted with the CSRF token
// and the button the operator clicked.
type page struct {
	g        *gatehouse
	browsers map[string]*http.Client // operator name -> a logged-in browser
	csrf     map[string]string
	batch    bool // the inbox's batch form rather than the card's own
	last     struct {
		path, bearer string
		form         url.Values
		who          string
	}
}

func startPage(t *testing.T, dialect string) surface      { return newPage(t, dialect, false) }
func startBatchPage(t *testing.T, dialect string) surface { return newPage(t, dialect, true) }

func newPage(t *testing.T, dialect string, batch bool) *page {
	t.Helper()
	p := &page{g: newGatehouse(t, dialect, "", nil), browsers: map[string]*http.Client{}, csrf: map[string]string{}, batch: batch}
	for _, who := range []string{approver, outsider} {
		jar, _ := cookiejar.New(nil)
		b := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res := p.post(t, b, "/login", url.Values{"token": {p.g.ops[who]}}, "")
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("login as %s: %d", who, res.StatusCode)
		}
		v, ok := p.get(t, b, "/").Find(`input[name="csrf"]`).Attr("value")
		if !ok || v == "" {
			t.Fatal("no CSRF token on the page")
		}
		p.browsers[who], p.csrf[who] = b, v
	}
	return p
}

func (p *page) gatehouse() *gatehouse { return p.g }

// cardView is what one operator's page showed of the request.
type cardView struct {
	version string
	buttons []pageButton
	// group is the batch the inbox puts the card in, and batchOnce and
	// batchDeny the options the batch offers ("" when it offers none).
	group, batchOnce, batchDeny string
}

type pageButton struct {
	value, effect, disabled string // disabled: the reason shown, "" when enabled
	isDisabled              bool
}

// file files through the API, then keeps the card as each operator's page
// shows it (the request's page, or the inbox for a batch).
func (p *page) file(t *testing.T, f filing) (*shown, string) {
	t.Helper()
	rec, code := p.g.fileREST(t, f)
	if code != "" {
		return nil, code
	}
	id := rec["id"].(string)
	views := map[string]cardView{}
	for who, b := range p.browsers {
		path := "/requests/" + id
		if p.batch {
			path = "/"
		}
		card := p.get(t, b, path).Find(`[data-testid="card"][data-request-id="` + id + `"]`)
		if card.Length() == 0 {
			t.Fatalf("%s's page at %s shows no card for %s", who, path, id)
		}
		v := cardView{version: card.AttrOr("data-version", ""), group: card.AttrOr("data-batch", ""), batchOnce: card.AttrOr("data-batch-once", ""), batchDeny: card.AttrOr("data-batch-deny", "")}
		card.Find(`button[data-testid="option"]`).Each(func(_ int, s *goquery.Selection) {
			_, off := s.Attr("disabled")
			v.buttons = append(v.buttons, pageButton{value: s.AttrOr("value", ""), effect: s.Find(`[data-testid="option-effect"]`).Text(),
				disabled: s.AttrOr("title", ""), isDisabled: off})
		})
		views[who] = v
	}
	return &shown{id: id, data: views}, ""
}

func (p *page) edit(t *testing.T, s *shown) { p.g.editREST(t, s.id) }

// decide clicks the button whose effect words show the pick, on the card
// the operator's page showed. The stranger has no page: it posts the form
// alice's page holds with the agent's bearer token. A button the page
// disabled is the page's refusal, with its reason; the form is posted
// anyway, as a hand-made request would be, and the server must refuse it too.
func (p *page) decide(t *testing.T, s *shown, a act) answer {
	t.Helper()
	viewer := a.who
	if viewer == stranger {
		viewer = approver
	}
	v := s.data.(map[string]cardView)[viewer]
	var btn *pageButton
	for i := range v.buttons {
		if shows(v.buttons[i].effect, a.pick) {
			btn = &v.buttons[i]
			break
		}
	}
	if btn == nil {
		t.Fatalf("no button on the card shows %s: %+v", a.pick, v.buttons)
	}
	offered := !btn.isDisabled
	decision := btn.value
	p.last.path, p.last.who, p.last.bearer = "/requests/"+s.id+"/decide", a.who, ""
	p.last.form = url.Values{"version": {v.version}, "decision": {decision}, "note": {""}}
	if p.batch {
		batchOption := map[string]string{"allow": v.batchOnce, "deny": v.batchDeny}[a.pick]
		offered = offered && batchOption != ""
		if batchOption != "" {
			decision = batchOption
		}
		// The form batch.js builds names the group the inbox drew; a
		// viewer offered no batch posts, by hand, the group alice's inbox
		// drew (the same for every viewer).
		group := v.group
		if group == "" {
			group = s.data.(map[string]cardView)[approver].group
		}
		p.last.path = "/decisions"
		p.last.form = url.Values{"group": {group}, "id": {s.id}, "version": {v.version}, "decision": {decision}, "note": {""}}
	}
	if a.who == stranger {
		p.last.bearer = p.g.agent
	} else {
		p.last.form.Set("csrf", p.csrf[a.who])
	}
	ans := p.send(t)
	if !offered && !ans.refused {
		t.Errorf("the page did not offer %s to %s (%q) but the server took the post", a.pick, a.who, btn.disabled)
	}
	if !offered && ans.refused && btn.disabled != "" && codeOfWords(btn.disabled) != ans.code {
		t.Errorf("the page's reason %q and the server's refusal %s differ", btn.disabled, ans.code)
	}
	if !offered && !btn.isDisabled && ans.refused {
		ans.said += " (the batch did not offer it)"
	}
	return ans
}

func (p *page) replay(t *testing.T, s *shown) answer { return p.send(t) }

// send posts the last form as htmx does and reads the notice it answers.
func (p *page) send(t *testing.T) answer {
	t.Helper()
	b := p.browsers[p.last.who]
	if p.last.who == stranger {
		b = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	res := p.post(t, b, p.last.path, p.last.form, p.last.bearer)
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var words []string // the text nodes apart, so a title and its text do not run together
	doc.Find("*").Contents().Each(func(_ int, n *goquery.Selection) {
		if goquery.NodeName(n) == "#text" && strings.TrimSpace(n.Text()) != "" {
			words = append(words, strings.Join(strings.Fields(n.Text()), " "))
		}
	})
	text := strings.Join(words, " ")
	if p.batch && res.StatusCode == http.StatusOK {
		line := doc.Find(`[data-testid="batch-result"]`)
		if line.Length() == 0 || line.AttrOr("data-status", "") == "200" {
			return answer{said: text}
		}
		why := line.Find(`[data-testid="batch-why"]`).Text()
		return answer{refused: true, code: codeOfWords(why), said: why}
	}
	if res.StatusCode == http.StatusOK {
		return answer{said: text}
	}
	code := codeOfWords(text)
	if code == "" {
		code = map[int]string{http.StatusUnauthorized: "unauthenticated", http.StatusForbidden: "forbidden"}[res.StatusCode]
	}
	return answer{refused: true, code: code, said: res.Status + ": " + text}
}

func (p *page) get(t *testing.T, b *http.Client, path string) *goquery.Document {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.g.URL+path, nil)
	req.Header.Set("Accept", "text/html")
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// post sends a form as the page's htmx does (HX-Request), with a bearer
// token when given.
func (p *page) post(t *testing.T, b *http.Client, path string, form url.Values, bearer string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.g.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	if path != "/login" {
		req.Header.Set("HX-Request", "true")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}
