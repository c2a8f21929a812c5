// Package codexbridge relays Codex's app-server protocol (JSON-RPC, one
// message a line, on stdio) between Codex and the client that started it, and
// files every approval Codex asks for in Gatehouse too: whichever answers
// first, the local client or the operator, answers Codex, and the other side
// is withdrawn. It reports each thread as a session too (sessions.go): a turn
// that completes leaves a waiting item with Codex's last message, the next
// turn moves it on.
package codexbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/jsonl"
	"github.com/gatehousehq/gatehouse/internal/rpcid"
)

// Gatehouse is what the bridge needs of the Gatehouse client.
type Gatehouse interface {
	File(ctx context.Context, n api.NewRequest, idempotencyKey string) (*api.Request, error)
	WaitSettled(ctx context.Context, id string) (*api.Request, error)
	Get(ctx context.Context, id string) (*api.Request, error)
	Cancel(ctx context.Context, id string) (*api.Request, error)
	SessionEvent(ctx context.Context, e api.SessionEvent) (*api.SessionEventAnswer, error)
}

// Bridge relays one app-server session.
type Bridge struct {
	Gatehouse Gatehouse
	// ExpiresIn (seconds) is how long a filed approval stays open in
	// Gatehouse; after that only the local client can answer it.
	ExpiresIn int64
	// RuntimeID, when set, is the runtime the filings name, so the server also
	// forwards each decision to OnDecision (the runtime's callback), and a
	// decision for an approval this bridge no longer holds is a conflict.
	RuntimeID string
	// Log receives one line per thing worth knowing (filed, answered, failed).
	Log io.Writer

	mu       sync.Mutex
	toCodex  io.Writer
	pending  map[string]*pending // JSON-RPC request id -> approval not yet answered
	operator map[string]bool     // request ids the operator answered: the client's late answer is dropped
	filed    map[string]*pending // Gatehouse request id -> its approval, while pending
	settled  map[string]bool     // Gatehouse request ids whose decision reached Codex
	work     sync.WaitGroup      // filings, waits and withdrawals in flight
	sessions *sessions           // Codex's threads, reported as sessions
}

// pending is one approval Codex waits on.
type pending struct {
	id        json.RawMessage // the JSON-RPC id, as Codex sent it
	approval  *approval
	stop      context.CancelFunc // ends the Gatehouse wait
	requestID string             // the Gatehouse request, once filed
	filedAs   *api.Request       // the record the filing answered
	done      bool               // answered or withdrawn: nothing more to send Codex
	cancelled bool               // the Gatehouse request's cancel was sent
}

// envelope is the part of a JSON-RPC message the bridge reads. Codex sends no
// "jsonrpc" member; a request has id and method, a response id and no method.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Relay copies messages both ways until Codex's output ends, then withdraws
// whatever is still open in Gatehouse. fromClient ending closes toCodex, which
// tells Codex to stop.
func (b *Bridge) Relay(ctx context.Context, fromClient io.Reader, toClient io.Writer, toCodex io.WriteCloser, fromCodex io.Reader) error {
	ctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	b.mu.Lock()
	b.toCodex, b.pending, b.operator = toCodex, map[string]*pending{}, map[string]bool{}
	b.filed, b.settled = map[string]*pending{}, map[string]bool{}
	b.sessions = newSessions(b.Gatehouse, b.logf)
	b.mu.Unlock()

	clientDone := make(chan error, 1)
	go func() {
		err := jsonl.EachLine(fromClient, func(line []byte) error { return b.fromClient(ctx, line) })
		_ = toCodex.Close()
		clientDone <- err
	}()
	err := jsonl.EachLine(fromCodex, func(line []byte) error { return b.fromCodex(ctx, line, toClient) })
	stopAll()
	b.withdrawAll()
	b.work.Wait()
	b.sessions.close()
	select {
	case cerr := <-clientDone:
		err = errors.Join(err, cerr)
	default:
		// The client's side is still open (Codex went first): its reader ends
		// when the caller's stdin does.
	}
	return err
}

// fromCodex relays one line to the client unchanged, and files it when it is
// an approval, or withdraws the filing when Codex says the request is over.
func (b *Bridge) fromCodex(ctx context.Context, line []byte, toClient io.Writer) error {
	if _, err := toClient.Write(line); err != nil {
		return fmt.Errorf("write to the client: %w", err)
	}
	var m envelope
	if json.Unmarshal(line, &m) != nil || m.Method == "" {
		return nil
	}
	if len(m.ID) == 0 {
		b.sessions.observe(m.Method, m.Params)
	}
	if m.Method == "serverRequest/resolved" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			b.settle(idKey(p.RequestID), "Codex resolved it")
		}
		return nil
	}
	if len(m.ID) == 0 {
		return nil
	}
	a, ok, err := parseApproval(m.Method, m.Params)
	if !ok {
		return nil
	}
	if err != nil {
		b.logf("not filed, the local client answers: %v", err)
		return nil
	}
	wctx, stop := context.WithCancel(ctx)
	p := &pending{id: append(json.RawMessage(nil), m.ID...), approval: a, stop: stop}
	b.mu.Lock()
	b.pending[idKey(m.ID)] = p
	b.mu.Unlock()
	b.work.Add(1)
	go func() {
		defer b.work.Done()
		b.askOperator(wctx, p)
	}()
	return nil
}

// fromClient relays one line to Codex unchanged, unless it answers an
// approval the operator already answered (Codex took the first answer).
func (b *Bridge) fromClient(ctx context.Context, line []byte) error {
	var m envelope
	if json.Unmarshal(line, &m) == nil && m.Method == "" && len(m.ID) > 0 {
		key := idKey(m.ID)
		b.mu.Lock()
		if b.operator[key] {
			b.mu.Unlock()
			b.logf("request %s: the operator answered first; the local client's answer is dropped", key)
			return nil
		}
		p := b.pending[key]
		if p != nil {
			// Sent while holding the lock, so an operator's answer cannot
			// slip in between.
			p.done = true
			delete(b.pending, key)
			delete(b.filed, p.requestID)
			_, err := b.toCodex.Write(line)
			b.mu.Unlock()
			b.withdraw(p, "the local client answered")
			return err
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.toCodex.Write(line)
	return err
}

// askOperator files the approval, waits for the operator and, when they
// decide first, answers Codex with the offered decision they chose.
func (b *Bridge) askOperator(ctx context.Context, p *pending) {
	n := p.approval.request
	if b.ExpiresIn > 0 {
		exp := b.ExpiresIn
		n.ExpiresIn = &exp
	}
	if b.RuntimeID != "" {
		n.RuntimeID = &b.RuntimeID
	}
	// The filing is not cut short by an answer meanwhile: a request the
	// server created must come back with its id, to be withdrawn.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fileTimeout)
	r, err := b.Gatehouse.File(fctx, n, p.approval.idempotencyKey())
	cancel()
	if err != nil {
		b.logf("request %s not filed, the local client answers: %v", idKey(p.id), err)
		return
	}
	b.mu.Lock()
	p.requestID, p.filedAs = r.ID, r
	done := p.done
	if !done {
		b.filed[r.ID] = p
	}
	b.mu.Unlock()
	b.logf("request %s filed as %s: %s", idKey(p.id), r.ID, r.Title)
	if done {
		b.withdraw(p, "answered while it was being filed")
		return
	}
	final := r
	if r.Status == "open" {
		final, err = b.Gatehouse.WaitSettled(ctx, r.ID)
		if err != nil {
			return // answered elsewhere, or the bridge stops: the withdrawal follows
		}
	}
	option := operatorChoice(r, final)
	if _, ok := p.approval.results[option]; !ok {
		b.logf("%s ended %s without a decision; the local client answers", r.ID, final.Status)
		return
	}
	b.answerCodex(p, option, deref(final.DecidedBy))
}

// answerCodex sends Codex the operator's decision, unless the approval was
// answered already. It reports whether the approval is answered with it.
func (b *Bridge) answerCodex(p *pending, option, by string) bool {
	key := idKey(p.id)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.settled[p.requestID] {
		return true // the wait and the callback both brought it
	}
	if p.done {
		return false
	}
	result := p.approval.results[option]
	p.done = true
	delete(b.pending, key)
	delete(b.filed, p.requestID)
	b.operator[key] = true
	b.settled[p.requestID] = true
	msg, _ := json.Marshal(struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}{p.id, result})
	if _, err := b.toCodex.Write(append(msg, '\n')); err != nil {
		b.logf("answer %s to Codex: %v", key, err)
		return true
	}
	b.logf("request %s answered from Gatehouse: %s by %s", key, option, by)
	return true
}

func (b *Bridge) logf(format string, args ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, "gatehouse codex: "+format+"\n", args...)
	}
}

// idKey is a JSON-RPC id as a map key, by its value: 1 and 1.0 are one
// request, 0 and "0" two.
func idKey(id json.RawMessage) string { return rpcid.Key(id) }

func deref(s *string) string {
	if s == nil {
		return "the operator"
	}
	return *s
}
