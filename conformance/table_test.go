package conformance_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// A filing is what the agent asks for. Options are written as the filer
// writes them: their ids are the filer's and may read as anything.
type filing struct {
	title    string
	options  []option
	policy   *policy // approvers, as a REST filer writes them (a rule gives a bridge's filing the same)
	unsealed bool    // the filer may edit it after it is shown
}

type option struct{ id, label, effect string }

type policy struct {
	required int
	groups   []string
}

// An act is what an operator does on a surface: who, and which option by
// what the surface showed them — the button, position or word that shows
// the effect, never the filer's id.
type act struct {
	who  string // approver, outsider or stranger
	pick string // "allow" or "deny"
}

// A step of a case: the filer edits the request after it was shown, an
// operator acts, or the last act is sent again byte for byte.
type step struct {
	edit   bool
	act    *act
	replay bool
	want   want
}

// want is the outcome every surface must reach. A refused step changes
// nothing (the record's version and audit entries stay); a taken one moves
// the record.
type want struct {
	refused []string // the codes the surface may refuse with; nil: taken
	status  string   // the record's status afterwards
	effect  string   // the effect of its decision, once resolved
}

// ignored is the answer to a callback a surface acknowledges without acting
// on it (a chat service's retry or replay): refused, in silence.
const ignored = "(ignored)"

// A case is one row of the table. na names the surfaces that cannot express
// it, with why: the table says so instead of skipping.
type kase struct {
	name      string
	filing    filing
	refusedAt string // the code the filing is refused with; then no steps
	steps     []step
	na        map[string]string
}

var (
	neutral = []option{{"x1", "Option A", "allow"}, {"x2", "Option B", "deny"}}
	// The filer's ids read as the opposite of the effects: a "deny" that
	// allows. Refused at filing wherever an agent names options.
	misleading = []option{{"deny", "Deny", "allow"}, {"no", "No", "deny"}}

	sealedOnly = "the bridge files sealed requests: nothing can edit one after the operator is shown it"
	codexNames = "the bridge writes every option's id and label itself from Codex's fixed decision names; Codex names none"
	replyNoVer = "a reply carries no version of its own: it decides on the version its message last showed, and the message is redrawn on every edit (the button row holds the stale click)"
)

var cases = []kase{
	{
		name:      "misleading option refused at filing",
		filing:    filing{title: "Deploy the site", options: misleading},
		refusedAt: "misleading_option",
		na:        map[string]string{"codex": codexNames},
	},
	{
		name:   "the option shown as deny denies",
		filing: filing{title: "Deploy the site", options: neutral},
		steps:  []step{{act: &act{approver, "deny"}, want: want{status: "resolved", effect: "deny"}}},
	},
	{
		name:   "the option shown as allow allows",
		filing: filing{title: "Deploy the site", options: neutral},
		steps:  []step{{act: &act{approver, "allow"}, want: want{status: "resolved", effect: "allow"}}},
	},
	{
		name:   "a stale version decides nothing",
		filing: filing{title: "Deploy the site", options: neutral, unsealed: true},
		steps: []step{
			{edit: true, want: want{status: "open"}},
			{act: &act{approver, "allow"}, want: want{refused: []string{models.ECodeVersionConflict}, status: "open"}},
		},
		na: map[string]string{"acp": sealedOnly, "codex": sealedOnly, "telegram/reply": replyNoVer},
	},
	{
		name:   "two-person policy: one allow vote leaves it open",
		filing: filing{title: "Deploy the site", options: neutral, policy: &policy{required: 2}},
		steps:  []step{{act: &act{approver, "allow"}, want: want{status: "open"}}},
	},
	{
		name:   "two-person policy: a deny vote resolves at once",
		filing: filing{title: "Deploy the site", options: neutral, policy: &policy{required: 2}},
		steps:  []step{{act: &act{approver, "deny"}, want: want{status: "resolved", effect: "deny"}}},
	},
	{
		name:   "a replayed decision is acted on once",
		filing: filing{title: "Deploy the site", options: neutral},
		steps: []step{
			{act: &act{approver, "allow"}, want: want{status: "resolved", effect: "allow"}},
			{replay: true, want: want{refused: []string{models.ECodeAlreadyDecided, ignored}, status: "resolved", effect: "allow"}},
		},
	},
	{
		name:   "an unlinked identity decides nothing",
		filing: filing{title: "Deploy the site", options: neutral},
		steps: []step{{act: &act{stranger, "allow"}, want: want{
			refused: []string{models.ECodeForbidden, models.ECodeUnauthenticated}, status: "open"}}},
	},
	{
		name:   "an operator outside the policy's groups cannot allow",
		filing: filing{title: "Deploy the site", options: neutral, policy: &policy{required: 1, groups: []string{"release"}}},
		steps:  []step{{act: &act{outsider, "allow"}, want: want{refused: []string{models.ECodeNotApprover}, status: "open"}}},
	},
	{
		name:   "an operator outside the policy's groups may deny",
		filing: filing{title: "Deploy the site", options: neutral, policy: &policy{required: 1, groups: []string{"release"}}},
		steps:  []step{{act: &act{outsider, "deny"}, want: want{status: "resolved", effect: "deny"}}},
	},
}

// shown is a request as a surface showed it to the operators: its id, and
// what the surface drew (a page's forms, a chat message) for its acts.
type shown struct {
	id   string
	data any
}

// answer is what a surface told the operator of an act.
type answer struct {
	refused bool
	code    string // the refusal's code as the surface tells it ("" when it tells none)
	said    string // the surface's words, for messages
}

// A surface is one column of the table: a way an operator decides. Adding a
// surface is adding one of these to surfaces.
type surface interface {
	// file has the agent file f the way requests reach this surface, and
	// waits until the surface shows it; a refusal at filing is its code.
	file(t *testing.T, f filing) (*shown, string)
	// edit has the filer change the request after it was shown.
	edit(t *testing.T, s *shown)
	// decide is the operator's act on what the surface showed.
	decide(t *testing.T, s *shown, a act) answer
	// replay sends the last act again, as it was sent.
	replay(t *testing.T, s *shown) answer
	// gatehouse is the service the surface stands on, for the record.
	gatehouse() *gatehouse
}

// deliverer is a surface that carries the decision on to the agent (a
// bridge): delivered is the effect the agent got since the last call, ""
// for none. It blocks for the answer only when one is due.
type deliverer interface {
	delivered(t *testing.T, s *shown, due bool) string
}

// surfaces are the columns, each started on a fresh service per dialect.
var surfaces = []struct {
	name  string
	start func(t *testing.T, dialect string) surface
}{
	{"page", startPage},
	{"api/decide", startAPI("decide")},
	{"api/attention", startAPI("attention")},
	{"batch/api", startAPI("batch")},
	{"batch/page", startBatchPage},
	{"slack", startSlack},
	{"telegram/button", startTelegram("button")},
	{"telegram/reply", startTelegram("reply")},
	{"acp", startACP},
	{"codex", startCodex},
}

// TestConformance runs every case on every surface, on SQLite and
// PostgreSQL: the same filings, stale versions, policies, replays and
// identities reach the same outcome wherever the operator decides.
func TestConformance(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		marks := map[[2]string]string{} // case, surface -> ok, FAIL or n/a
		for _, sf := range surfaces {
			t.Run(sf.name, func(t *testing.T) {
				s := sf.start(t, dialect)
				for _, c := range cases {
					why, na := c.na[sf.name]
					passed := t.Run(c.name, func(t *testing.T) {
						if na {
							t.Logf("n/a on %s: %s", sf.name, why)
							return
						}
						run(t, s, c)
					})
					marks[[2]string{c.name, sf.name}] = map[bool]string{true: "ok", false: "FAIL"}[passed]
					if na {
						marks[[2]string{c.name, sf.name}] = "n/a"
					}
				}
			})
		}
		t.Logf("%d cases × %d surfaces on %s:\n%s", len(cases), len(surfaces), dialect, grid(marks))
	})
}

// grid draws the table's outcome: a row per case, a column per surface.
func grid(marks map[[2]string]string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	fmt.Fprint(w, "case")
	for _, sf := range surfaces {
		fmt.Fprint(w, "\t", sf.name)
	}
	fmt.Fprintln(w)
	for _, c := range cases {
		fmt.Fprint(w, c.name)
		for _, sf := range surfaces {
			m := marks[[2]string{c.name, sf.name}]
			if m == "" {
				m = "-"
			}
			fmt.Fprint(w, "\t", m)
		}
		fmt.Fprintln(w)
	}
	_ = w.Flush()
	return b.String()
}

// run plays one case on one surface and checks every step's outcome.
func run(t *testing.T, s surface, c kase) {
	g := s.gatehouse()
	sh, code := s.file(t, c.filing)
	if c.refusedAt != "" || code != "" {
		switch {
		case code == "":
			t.Fatalf("the filing was taken (%s), want it refused with %s", sh.id, c.refusedAt)
		case code != c.refusedAt:
			t.Fatalf("the filing was refused with %q, want %q", code, c.refusedAt)
		}
		return
	}
	for i, st := range c.steps {
		before, audits := g.record(t, sh.id), g.auditLen(t, sh.id)
		var ans answer
		switch {
		case st.edit:
			s.edit(t, sh)
		case st.replay:
			ans = s.replay(t, sh)
		default:
			ans = s.decide(t, sh, *st.act)
		}
		after := g.record(t, sh.id)
		moved := after["version"] != before["version"] || g.auditLen(t, sh.id) != audits
		switch {
		case st.want.refused == nil && ans.refused:
			t.Errorf("step %d: refused (%s): %s", i, ans.code, ans.said)
		case st.want.refused != nil && !ans.refused:
			t.Errorf("step %d: taken (%s), want a refusal %v", i, ans.said, st.want.refused)
		case st.want.refused != nil && !slices.Contains(st.want.refused, ans.code):
			t.Errorf("step %d: refused with %q (%s), want one of %v", i, ans.code, ans.said, st.want.refused)
		}
		if st.want.refused != nil && moved {
			t.Errorf("step %d: a refused act changed the request: v%v -> v%v", i, before["version"], after["version"])
		}
		if st.want.refused == nil && !moved {
			t.Errorf("step %d: the act changed nothing (v%v)", i, after["version"])
		}
		if after["status"] != st.want.status || effectOf(after) != st.want.effect {
			t.Errorf("step %d: the request is %v with effect %q, want %s %q", i, after["status"], effectOf(after), st.want.status, st.want.effect)
		}
		if d, ok := s.(deliverer); ok && !st.edit {
			// What reaches the agent is what the record says, once: the
			// decision when this step resolved it, nothing otherwise.
			due := before["status"] == "open" && after["status"] == "resolved"
			want := ""
			if due {
				want = effectOf(after)
			}
			if got := d.delivered(t, sh, due); got != want {
				t.Errorf("step %d: the agent got %q, want %q", i, got, want)
			}
		}
	}
}
