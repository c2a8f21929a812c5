package views

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Span says a duration the way a person reads it: "5 minutes".
func Span(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d.Round(time.Second) / time.Second)
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.Itoa(n) + " " + unit + "s"
	}
	switch m := s / 60; {
	case s < 60:
		return plural(s, "second")
	case m < 60:
		return plural(m, "minute")
	case m < 48*60:
		return plural(m/60, "hour")
	default:
		return plural(m/60/24, "day")
	}
}

func age(c Card, now time.Time) string { return Span(now.Sub(c.CreatedAt)) + " ago" }

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func urgent(c Card, now time.Time) string {
	return strconv.FormatBool(c.ExpiresAt.Sub(now) < time.Minute)
}

// label is the text of the option decided, or its id when it is no longer offered.
func label(c Card, id string) string {
	for _, o := range c.Options {
		if o.ID == id {
			return o.Label
		}
	}
	return id
}

func effect(c Card) string {
	for _, o := range c.Options {
		if o.ID == c.Decision {
			return o.Effect
		}
	}
	return ""
}

// Outcome says how a closed request ended: "Allowed once — approved by rule
// ci-reads", "Expired", "Answered by operator:ann".
func Outcome(c Card) string {
	switch c.Status {
	case "open":
		return ""
	case "expired":
		return "Expired with no decision"
	case "dismissed":
		return "Dismissed"
	case "cancelled":
		return "Withdrawn by " + c.CreatedBy
	}
	var what string
	switch {
	case c.Decision != "":
		what = label(c, c.Decision)
	case c.Answer != "":
		what = "Answered"
	default:
		what = "Resolved"
	}
	// The label is the filer's text: an allow or a deny also says so in
	// Gatehouse's word, so an allow labelled "Deny" cannot read as a deny.
	verb := ""
	switch effect(c) {
	case "allow":
		verb = "approved "
	case "deny":
		verb = "denied "
	}
	via := c.DecidedVia
	switch {
	case strings.HasPrefix(via, "rule:"):
		if verb == "" {
			verb = "decided "
		}
		return fmt.Sprintf("%s — %sby rule %s", what, verb, strings.TrimPrefix(via, "rule:"))
	case via == "expiry":
		if verb != "" {
			return what + " — " + verb + "as the default, on expiry"
		}
		return what + " — the default, on expiry"
	case c.DecidedBy != "":
		return fmt.Sprintf("%s — %sby %s via %s", what, verb, c.DecidedBy, via)
	}
	return what
}

// actuationText says what the forward to the runtime came to, and for a
// conflict what the operator should do.
func actuationText(c Card) string {
	switch c.Actuation.State {
	case "pending":
		return "Sending the decision to the runtime…"
	case "delivered":
		return "Delivered to the runtime."
	case "failed":
		return fmt.Sprintf("The runtime could not be reached after %d attempts. The decision stands; the agent will see it when it asks again.", c.Actuation.Attempts)
	case "conflict":
		where := "the agent's session"
		if c.Session != "" {
			where = "session " + c.Session
		}
		return "The runtime no longer holds this prompt (it may have restarted). Open " + where + " and answer there; the decision recorded here stands."
	}
	return ""
}

// filterURL is the inbox URL for f with one field changed.
func filterURL(f Filter, key, value string) string {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	st, kind, risk, sort := f.Status, f.Kind, f.Risk, f.Sort
	switch key {
	case "sort":
		sort = value
	case "status":
		st = value
	case "kind":
		kind = value
	case "risk":
		risk = value
	}
	if st != "open" {
		set("status", st)
	}
	set("kind", kind)
	set("risk", risk)
	set("sort", sort)
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// WSURL is the websocket address for an inbox showing f: the hub keeps the
// page's selection so it only sends cards that belong on it.
func WSURL(f Filter) string {
	q := url.Values{}
	if f.ID != "" {
		q.Set("id", f.ID)
		return "/ws?" + q.Encode()
	}
	q.Set("status", f.Status)
	if f.Kind != "" {
		q.Set("kind", f.Kind)
	}
	if f.Risk != "" {
		q.Set("risk", f.Risk)
	}
	return "/ws?" + q.Encode()
}

// Title is the tab title: the open count first so it shows in a narrow tab.
func Title(p Page) string {
	t := "Gatehouse"
	if p.Title != "" {
		t = p.Title + " · Gatehouse"
	}
	if p.OpenCount > 0 {
		t = "(" + strconv.FormatInt(p.OpenCount, 10) + ") " + t
	}
	return t
}

// CardID is the stable DOM id of a request's card.
func CardID(id string) string { return "req-" + id }

func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

// htmxConfig turns off what the CSP forbids (inline styles, eval) and lets a
// 4xx/5xx answer to a decision swap its notice in instead of logging an error.
const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[2345]..","swap":true,"error":false}]}`

var kindsList = []string{"approval", "question", "permission", "waiting", "review", "failure", "setup"}
var risksList = []string{"low", "medium", "high"}

func cursorSep(f Filter) string {
	if filterURL(f, "", "") == "/" {
		return "?"
	}
	return "&"
}

// holdText says what a held request will become if nobody decides.
func holdText(c Card) string {
	t := "a rule holds this briefly before it applies"
	if c.HoldRule != "" {
		t = "rule " + c.HoldRule + " decides \"" + label(c, c.HoldThen) + "\""
		if !c.HoldUntil.IsZero() {
			t += " at " + c.HoldUntil.UTC().Format("15:04:05") + " UTC"
		}
		t += " unless you decide first"
	}
	return t
}

// openWords is what a screen reader hears after the open count's number.
func openWords(n int64) string {
	if n == 1 {
		return " open request"
	}
	return " open requests"
}

// inboxHeading names the inbox by its filter, for the page's h1.
func inboxHeading(f Filter) string {
	h := "Open requests"
	switch f.Status {
	case "resolved":
		h = "Resolved requests"
	case "all":
		h = "All requests"
	}
	if f.Kind != "" {
		h += ", kind " + f.Kind
	}
	if f.Risk != "" {
		h += ", " + f.Risk + " risk"
	}
	return h
}
