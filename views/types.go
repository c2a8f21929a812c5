// Package views renders Gatehouse's pages and live fragments with templ. Its
// types are its own: the web package converts stored records into them, so no
// storage struct ever reaches a template.
package views

import "time"

// Option is one choice offered on a card.
type Option struct {
	ID     string
	Label  string
	Effect string // allow, deny or "" (a plain answer)
	Saves  string // what choosing it saves beyond this decision ("Bash(git push *) to project settings"); "" for nothing
	// Remembers is what choosing it also remembers in Gatehouse, as its filer
	// declared it; nil for nothing.
	Remembers *Remembers
}

// Remembers is a remembered allow as a card shows it before the click: the
// match in words and as the rule text, the scope and the duration. An empty
// Match says the declared remember cannot be stored for this request, which
// the card says rather than hide.
type Remembers struct {
	Words string // "exactly npm test"
	Rule  string // "match: {tool: 'Bash', command: '^npm test$'}"
	Match string // the pattern stored
	Scope string // session, project, runtime
	For   string // 15m, 1h, 8h, until_revoked
}

// RememberForm is the card's "Remember…" control: the allow it remembers
// with, the command families offered (narrowest first) and the scopes this
// request can take.
type RememberForm struct {
	Option  string // the plain allow option the control decides with
	Choices []RememberChoice
	Scopes  []string
}

// RememberChoice is one family the control offers.
type RememberChoice struct {
	Match string
	Words string
	Rule  string
}

// Actuation is what became of forwarding the decision to the runtime.
type Actuation struct {
	State    string // none, pending, delivered, conflict, failed
	Attempts int
}

// Card is one request as the operator sees it in the inbox.
type Card struct {
	ID            string
	Kind          string
	Status        string
	Version       int
	Risk          string // "" when the filer gave none: no badge
	Title         string
	Summary       string
	Tool          string
	Command       string
	CreatedBy     string
	CreatedAt     time.Time
	ExpiresAt     time.Time
	ResolvedAt    time.Time // zero while open
	Options       []Option
	DefaultOption string // decided on expiry; "" for none
	AllowAnswer   bool
	Held          bool      // a rule holds it for a short window before it applies
	HoldRule      string    // the rule that holds it
	HoldThen      string    // the option the rule decides when the window ends
	HoldUntil     time.Time // when the window ends

	Decision   string // option id, "" when none
	Answer     string
	Note       string
	DecidedBy  string
	DecidedVia string // api, page, expiry, rule:NAME
	Actuation  Actuation
	Session    string // source_ref's session: which agent session asks
	Cwd        string // source_ref's cwd: where it runs
	Runtime    string // the named runtime's name, "" when the request names none
	Machine    string // that runtime's machine
	Edited     bool   // the filer changed it after filing (an unsealed request)
	// Exact is a pending grant's exact request as its detail says it (method,
	// host, path, query, digests and the body), shown on the card so what is
	// approved is read where it is approved; "" for any other request.
	Exact string
	// LastMessage is a waiting item's last message from its session (the
	// request's detail), shown on the card; "" for any other request.
	LastMessage string

	// Remember is the "Remember…" control, nil when the card offers none;
	// GrantID the remembered allow that decided it, "" for none.
	Remember *RememberForm
	GrantID  string

	Approvals *Approvals // nil without an approval policy
	NoVote    string     // why the operator viewing may not vote, in words; "" when they may

	// Batch groups open cards that ask for the same action (the same kind,
	// tool, command, directory, risk and options): the inbox offers to decide
	// a group of two or more at once. "" for a card the viewer cannot decide
	// in a batch. BatchOnce and BatchDeny are the option ids a batch allows
	// once and denies with ("" when the request offers none).
	Batch     string
	BatchOnce string
	BatchDeny string

	// Review is the advisory reviewer's reading of this version; nil when
	// there is none (no reviewer, or an edit voided it).
	Review *CardReview
}

// CardReview is the advisory reviewer's reading as a card shows it.
type CardReview struct {
	Status     string // pending, done, no_opinion
	Risk       string // low … critical, when done
	Authorised string // unknown … high, when done
	Rationale  string
	Model      string
}

// Approvals is a card's approval policy and the votes so far.
type Approvals struct {
	Required int
	Groups   []string
	Votes    []Vote
	// Escalated is each escalation step that fired, oldest first; Next, when
	// set, is the step still to come while the request is open.
	Escalated []Escalation
	Next      *Escalation
}

// Escalation is one step of an approval policy's escalation as the card says
// it: who it reached (Groups) or how it ended (Then, the Option label decided).
type Escalation struct {
	At     time.Time
	Groups []string
	Then   string // default or halt; "" for a step that reaches more approvers
	Option string // the label of the option the last step decided; "" when none
	Halted bool   // the agent was told to stop and wait for a person
	Away   bool   // it fired early: every eligible approver was away
}

// Vote is one operator's vote, as the votes line shows it.
type Vote struct {
	By     string // the operator's name
	Option string // the option's label
	Void   bool   // cast on an earlier text: an edit came after it, and it counts for nothing
}

// Open reports whether the card still waits for a decision.
func (c Card) Open() bool { return c.Status == "open" }

// Ctx is what a card needs from the page it is drawn on.
type Ctx struct {
	CSRF string    // the session's CSRF token; "" in websocket fragments (htmx sends it as a header)
	Back string    // where a no-JS decision returns to
	Now  time.Time // for server-rendered ages and countdowns
	Page bool      // drawn on its own request page (the title is not a link)
}

// Filter is the inbox's current selection.
type Filter struct {
	Status string // open (default), resolved, all
	Kind   string
	Risk   string
	ID     string // one request: its own page, live
	// Sort is "review" when the inbox is sorted by the reviewer's risk
	// (critical first), on demand; "" is newest first.
	Sort string
}

// Assets are the URLs of the page's static files (content-hashed by the server).
type Assets struct {
	CSS       string
	Manifest  string
	Icon      string
	AppleIcon string
	Favicon   string
	Scripts   []string // loaded in order, deferred
}

// Page is what the layout needs.
type Page struct {
	Title     string // "" for the inbox: the count and "Gatehouse"
	OpenCount int64
	CSRF      string
	Operator  string // "" when logged out
	WSURL     string // the websocket to connect to; "" for none
	Assets    Assets
	View      string // inbox or agents: which view the views nav marks current; "" for neither
}

// Inbox is the inbox page.
type Inbox struct {
	Page       Page
	Filter     Filter
	Cards      []Card
	NextCursor string
	Notice     *Notice
	Now        time.Time
	// Remembered are the live remembered allows, newest first.
	Remembered []RememberedRow
	// Suggestions are the remembered allows proposed from decisions.
	Suggestions []SuggestionRow
}

// Detail is one request's own page.
type Detail struct {
	Page      Page
	Card      Card
	Detail    string
	SourceRef []KV
	Audit     Audit
	Notice    *Notice
	Now       time.Time
}

// KV is one key and value, in display order.
type KV struct {
	Key   string
	Value string
}

// AuditRow is one event of a request's trail.
type AuditRow struct {
	At      time.Time
	Version int
	Action  string
	Actor   string
	Via     string
	Detail  []KV // what the event carried, one line per key
}

// Audit is a request's trail as its page shows it; the hub redraws it live.
type Audit struct {
	RequestID string
	Rows      []AuditRow
}

// Notice tells the operator what came of an action.
type Notice struct {
	Kind    string // ok, conflict, expired, error
	Title   string
	Text    string
	Current *Card // the request as it stands, on a conflict
}

// Login is the login page.
type Login struct {
	Page  Page
	Error string
}

// BatchNotice tells the operator what came of a batch.
type BatchNotice struct {
	Kind    string // ok when every decision stood, else conflict
	Title   string // "Allowed 11 of 12 once"
	BatchID string
	Lines   []BatchLine // the ones that did not simply stand, and votes recorded
}

// BatchLine is one request of a batch that the operator should look at again.
type BatchLine struct {
	ID     string
	Title  string // "" when the request is unknown
	Status string // the result's status: 200 (a vote recorded), 409, 410, …
	Why    string
}
