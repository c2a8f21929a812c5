package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/jsonl"
)

// Gatehouse is what the bridge needs of the Gatehouse client.
type Gatehouse interface {
	File(ctx context.Context, n api.NewRequest, idempotencyKey string) (*api.Request, error)
	WaitSettled(ctx context.Context, id string) (*api.Request, error)
	Cancel(ctx context.Context, id string) (*api.Request, error)
	SessionEvent(ctx context.Context, e api.SessionEvent) (*api.SessionEventAnswer, error)
}

// Bridge relays one agent's stdio.
type Bridge struct {
	Gatehouse Gatehouse
	// Timeout is how long a permission request waits for the operator; the
	// Gatehouse request expires a few seconds later, once withdrawn.
	Timeout time.Duration
	// Headless says no editor is attached: the bridge's own client is the
	// editor side and never answers a permission request, so a request
	// without the operator's answer gets the agent's reject option.
	Headless bool
	// Log receives one line per thing worth knowing (filed, answered, failed).
	Log io.Writer
	// Machine names the host in the sessions the bridge reports.
	Machine string
	// WaitReply is how long a headless bridge waits, after a turn ends, for
	// the operator's answer on the session's waiting item, which it then
	// sends as the next prompt; 0 sends none (the waiting item takes no answer).
	WaitReply time.Duration

	toAgent, toEditor *lineWriter
	run               string // names this run in idempotency keys
	filings           int    // permission requests registered, numbering their idempotency keys

	mu       sync.Mutex
	who      Who
	sessions map[string]string // sessionId -> cwd, from session/new and session/load
	calls    map[string]call   // editor->agent requests awaiting the agent's answer, by id
	asks     map[string]*ask   // agent->editor permission requests not yet answered, by id
	answered map[string]int    // per id, answers the editor still owes for requests the bridge answered: dropped
	work     sync.WaitGroup    // filings, waits and withdrawals in flight

	turns       map[string]*turn             // sessionId -> its turn in flight
	waits       map[string]chan *api.Request // sessionId -> the waiting item its last turn opened (headless)
	reports     chan report                  // session events to report, in order; nil once the agent ended
	reportsDone chan struct{}                // closed when the reporter ends
	stopReports context.CancelFunc           // cuts the reporter short
}

// call is an editor request the bridge reads the answer of.
type call struct {
	method string
	params json.RawMessage
}

// ask is one permission request the agent waits on.
type ask struct {
	id         json.RawMessage // the JSON-RPC id, as the agent sent it
	key        string
	filing     string // the idempotency key: this request's alone, never its id's
	perm       *Permission
	stop       context.CancelFunc // ends the Gatehouse wait
	requestID  string             // the Gatehouse request, once filed
	filedAs    *api.Request       // the record the filing answered
	done       bool               // answered: nothing more to send the agent
	withdrawn  bool               // the Gatehouse request's cancel was sent
	withdrawBy string             // why, for the cancel
}

// Relay copies messages both ways until the agent's output ends, then
// withdraws whatever is still open in Gatehouse. fromEditor ending closes
// toAgent.
func (b *Bridge) Relay(ctx context.Context, fromEditor io.Reader, toEditor io.Writer, toAgent io.WriteCloser, fromAgent io.Reader) error {
	ctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	b.mu.Lock()
	b.toAgent, b.toEditor = &lineWriter{w: toAgent}, &lineWriter{w: toEditor}
	b.run = hex.EncodeToString(nonce[:])
	b.sessions, b.calls, b.asks, b.answered = map[string]string{}, map[string]call{}, map[string]*ask{}, map[string]int{}
	b.turns, b.waits = map[string]*turn{}, map[string]chan *api.Request{}
	b.mu.Unlock()
	b.startReports(ctx)

	editorDone := make(chan error, 1)
	go func() {
		err := jsonl.EachLine(fromEditor, func(line []byte) error { return b.fromEditor(line) })
		_ = toAgent.Close()
		editorDone <- err
	}()
	err := jsonl.EachLine(fromAgent, func(line []byte) error { return b.fromAgent(ctx, line) })
	stopAll()
	b.withdrawAll("the agent's session ended")
	b.endReports()
	b.work.Wait()
	select {
	case eerr := <-editorDone:
		err = errors.Join(err, eerr)
	default:
		// The editor's side is still open (the agent went first): its
		// reader ends when the caller's stdin does.
	}
	return err
}

// fromAgent relays one line to the editor unchanged, reading who the agent
// is and which sessions it opened, and files each permission request.
func (b *Bridge) fromAgent(ctx context.Context, line []byte) error {
	var m envelope
	if json.Unmarshal(line, &m) != nil {
		return b.toEditor.write(line)
	}
	switch {
	case m.isResponse():
		b.noteAnswer(&m)
	case m.isRequest() && m.Method == MethodRequestPermission:
		// Registered before the editor sees it, so its answer finds it.
		b.register(ctx, &m)
	case m.Method == MethodSessionUpdate && !hasID(m.ID):
		b.noteUpdate(m.Params)
	}
	if err := b.toEditor.write(line); err != nil {
		return fmt.Errorf("write to the editor: %w", err)
	}
	return nil
}

// fromEditor relays one line to the agent unchanged, unless it answers a
// permission request the bridge answered already (the agent took the first
// answer). An editor's answer to a filed request withdraws the filing.
func (b *Bridge) fromEditor(line []byte) error {
	var m envelope
	if json.Unmarshal(line, &m) != nil {
		return b.toAgent.write(line)
	}
	switch {
	case m.isRequest():
		b.noteCall(&m)
	case m.isResponse():
		key := idKey(m.ID)
		b.mu.Lock()
		if b.answered[key] > 0 {
			// An editor answers a withdrawn request too, and before any
			// later request under the same id: this answer is the withdrawn one's.
			b.answered[key]--
			if b.answered[key] == 0 {
				delete(b.answered, key)
			}
			b.mu.Unlock()
			b.logf("request %s: answered already; the editor's answer is dropped", key)
			return nil
		}
		a := b.asks[key]
		if a != nil {
			a.done = true
			delete(b.asks, key)
		}
		b.mu.Unlock()
		if a != nil {
			b.withdraw(a, "decided in the editor: "+editorOutcome(m.Result, a))
		}
	case m.Method == MethodSessionCancel:
		if err := b.toAgent.write(line); err != nil {
			return err
		}
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		b.cancelSession(p.SessionID)
		b.cancelled(p.SessionID)
		return nil
	}
	return b.toAgent.write(line)
}

// noteCall keeps the editor's requests whose answers say who asks and
// where: initialize (the editor, then the agent) and the session requests
// (the working directory), and session/prompt, whose answer ends the turn
// it begins.
func (b *Bridge) noteCall(m *envelope) {
	var p struct {
		ClientInfo *struct {
			Name    string `json:"name"`
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"clientInfo"`
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
	}
	_ = json.Unmarshal(m.Params, &p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if m.Method == MethodInitialize && p.ClientInfo != nil {
		b.who.Editor, b.who.EditorVersion = p.ClientInfo.Name, p.ClientInfo.Version
	}
	if p.SessionID != "" && p.Cwd != "" {
		b.sessions[p.SessionID] = p.Cwd // session/load, resume, fork
	}
	if m.Method == MethodSessionPrompt {
		b.promptStarted(p.SessionID)
	}
	if m.Method == MethodInitialize || m.Method == MethodSessionNew || m.Method == MethodSessionPrompt || p.Cwd != "" {
		b.calls[idKey(m.ID)] = call{method: m.Method, params: m.Params}
	}
}

// noteAnswer reads the agent's answer to a kept editor request.
func (b *Bridge) noteAnswer(m *envelope) {
	key := idKey(m.ID)
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.calls[key]
	if !ok {
		return
	}
	delete(b.calls, key)
	var r struct {
		AgentInfo *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"agentInfo"`
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Result, &r)
	var p struct {
		Cwd       string `json:"cwd"`
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(c.params, &p)
	switch {
	case c.method == MethodInitialize && r.AgentInfo != nil:
		b.who.Agent, b.who.AgentVersion = r.AgentInfo.Name, r.AgentInfo.Version
	case c.method == MethodSessionPrompt:
		b.promptEnded(p.SessionID, m.Result)
	case r.SessionID != "" && p.Cwd != "":
		b.sessions[r.SessionID] = p.Cwd
		b.reportLocked(report{e: b.sessionEvent(r.SessionID, p.Cwd, "started")})
	case p.SessionID != "" && p.Cwd != "" && len(m.Error) == 0:
		// session/load, resume, fork: the session is the one named
		b.reportLocked(report{e: b.sessionEvent(p.SessionID, p.Cwd, "started")})
	}
}

// register keeps one permission request and starts asking the operator.
func (b *Bridge) register(ctx context.Context, m *envelope) {
	key := idKey(m.ID)
	wctx, stop := context.WithCancel(ctx)
	a := &ask{id: append(json.RawMessage(nil), m.ID...), key: key, stop: stop}
	b.mu.Lock()
	who := b.who
	var sid struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &sid)
	who.Cwd = b.sessions[sid.SessionID]
	perm, err := ParsePermission(m.Params, who)
	a.perm = perm
	if perm == nil {
		a.perm = &Permission{}
	}
	// An id the agent uses again is a new request and a new filing: keyed by
	// its id alone, the same line sent again would get the first filing's
	// record back, decided.
	b.filings++
	a.filing = fmt.Sprintf("acp:%s:%d:%s", b.run, b.filings, key)
	b.asks[key] = a
	b.mu.Unlock()
	b.work.Add(1)
	go func() {
		defer b.work.Done()
		if err != nil {
			b.logf("request %s not filed: %v", key, err)
			b.noDecision(a, "it could not be filed")
			return
		}
		b.askOperator(wctx, a)
	}()
}

func (b *Bridge) logf(format string, args ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, "gatehouse acp: "+format+"\n", args...)
	}
}

// editorOutcome names the editor's answer for the record.
func editorOutcome(result json.RawMessage, a *ask) string {
	var r struct {
		Outcome Outcome `json:"outcome"`
	}
	if json.Unmarshal(result, &r) != nil || r.Outcome.Outcome == "" {
		return "answered"
	}
	if r.Outcome.Outcome != "selected" {
		return r.Outcome.Outcome
	}
	// The agent's own option says what the editor chose (AgentOption maps
	// allow_always to allow_once, so it cannot be read backwards).
	for _, o := range a.perm.Params.Options {
		if o.OptionID == r.Outcome.OptionID && o.Kind != "" {
			return o.Kind
		}
	}
	return "option " + r.Outcome.OptionID
}
