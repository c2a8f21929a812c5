package codexbridge_test

import (
	"bufio"
	"bytes"
	"context"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/codexbridge"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// runtimeGatehouse is a server that forwards decisions to runtimes' callbacks,
// with a bridge registered as a runtime whose callback is the bridge's
// OnDecision behind client.Handler.
type runtimeGatehouse struct {
	store    *store.Store
	changes  *store.Changes
	runtime  *client.Client
	operator *client.Client
	rtID     string
}

func newRuntimeGatehouse(t *testing.T, b *codexbridge.Bridge) *runtimeGatehouse {
	t.Helper()
	// webtest runs the production assembly, forwarder included.
	e := webtest.New(t, "sqlite", web.Config{})
	s, changes := e.Store, e.Changes
	ctx := context.Background()

	_, rtSecret, err := s.CreateToken(ctx, models.RoleRuntime, "codex-laptop")
	if err != nil {
		t.Fatal(err)
	}
	_, opSecret, err := s.CreateToken(ctx, models.RoleOperator, "alice")
	if err != nil {
		t.Fatal(err)
	}
	g := &runtimeGatehouse{store: s, changes: changes, runtime: client.New(e.URL, rtSecret), operator: client.New(e.URL, opSecret)}
	var h http.Handler = http.NotFoundHandler()
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(callback.Close)
	rt, err := g.runtime.RegisterRuntime(ctx, api.RuntimeRegistration{Name: "codex-laptop", Machine: "laptop", CallbackURL: callback.URL})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := g.runtime.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h = &client.Handler{Keys: keys, RuntimeID: rt.ID, OnDecision: b.OnDecision}
	g.rtID, b.RuntimeID, b.Gatehouse = rt.ID, rt.ID, g.runtime
	return g
}

// actuation waits until the forward of the request's decision has an outcome.
func (g *runtimeGatehouse) actuation(t *testing.T, sub *store.Subscription, id string) string {
	t.Helper()
	deadline := time.After(guard)
	for {
		r, err := g.operator.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st := r.Actuation.State; st != "pending" && st != "none" {
			return st
		}
		select {
		case <-sub.C:
		case <-deadline:
			t.Fatalf("the decision on %s was never forwarded", id)
		}
	}
}

func TestBridgeAsRuntime(t *testing.T) {
	t.Run("a decision for an approval the bridge lost is a conflict", func(t *testing.T) {
		b := &codexbridge.Bridge{ExpiresIn: 600}
		g := newRuntimeGatehouse(t, b)
		sub := g.changes.Subscribe(64)
		defer sub.Close()
		// Filed by this runtime's bridge before it restarted: this bridge never saw it.
		n, _, err := codexbridge.Approval(codexbridge.MethodCommandApproval, approvalParams(t, "appserver-accept.jsonrpc.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		n.RuntimeID = &g.rtID
		r, err := g.runtime.File(context.Background(), n, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.operator.Decide(context.Background(), r.ID, r.Version, "accept", ""); err != nil {
			t.Fatal(err)
		}
		if st := g.actuation(t, sub, r.ID); st != "conflict" {
			t.Fatalf("actuation %s, want conflict", st)
		}
	})
	t.Run("a live approval the operator answers is delivered once", func(t *testing.T) {
		liveApproval(t, func(c *client.Client) codexbridge.Gatehouse { return c })
	})
	t.Run("the callback alone brings the decision", func(t *testing.T) {
		liveApproval(t, func(c *client.Client) codexbridge.Gatehouse { return noWait{c} })
	})
}

// noWait is Gatehouse whose long-poll never answers, so only the forwarded
// decision can reach the bridge.
type noWait struct{ *client.Client }

func (noWait) WaitSettled(ctx context.Context, _ string) (*api.Request, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// liveApproval: the bridge, registered as a runtime, relays the recorded
// approval; the operator accepts; Codex gets the answer once and the forward
// is delivered.
func liveApproval(t *testing.T, gh func(*client.Client) codexbridge.Gatehouse) {
	t.Helper()
	b := &codexbridge.Bridge{ExpiresIn: 600}
	g := newRuntimeGatehouse(t, b)
	b.Gatehouse = gh(g.runtime)
	sub := g.changes.Subscribe(64)
	defer sub.Close()
	fromCodexR, fromCodexW := io.Pipe()
	toCodexR, toCodexW := io.Pipe()
	clientInR, clientInW := io.Pipe()
	relayed := make(chan error, 1)
	go func() { relayed <- b.Relay(context.Background(), clientInR, io.Discard, toCodexW, fromCodexR) }()
	var request []byte
	entries, err := transcript("testdata/appserver-accept.jsonrpc.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if isApprovalRequest(e.Msg) {
			request = e.Msg
		}
	}
	if _, err := fromCodexW.Write(append(request, '\n')); err != nil {
		t.Fatal(err)
	}
	var id string
	deadline := time.After(guard)
	for id == "" {
		select {
		case ch := <-sub.C:
			if ch.Action == "create" {
				id = ch.RequestID
			}
		case <-deadline:
			t.Fatal("the bridge filed nothing")
		}
	}
	if _, err := g.operator.Decide(context.Background(), id, 1, "accept", ""); err != nil {
		t.Fatal(err)
	}
	toCodex := bufio.NewReader(toCodexR)
	answer := make(chan string, 1)
	go func() {
		line, _ := toCodex.ReadString('\n')
		answer <- line
	}()
	select {
	case got := <-answer:
		if got != `{"id":0,"result":{"decision":"accept"}}`+"\n" {
			t.Fatalf("Codex was sent %q", got)
		}
	case <-time.After(guard):
		t.Fatal("Codex was sent no answer")
	}
	if st := g.actuation(t, sub, id); st != "delivered" {
		t.Fatalf("actuation %s, want delivered (the wait and the callback both bring the decision; Codex gets it once)", st)
	}
	rest := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(toCodex); rest <- b }()
	clientInW.Close() // the bridge closes Codex's stdin
	fromCodexW.Close()
	if err := testkit.Recv(t, relayed, "relayed"); err != nil {
		t.Fatal(err)
	}
	if more := testkit.Recv(t, rest, "rest"); len(more) > 0 {
		t.Fatalf("Codex was sent more after the answer: %s", more)
	}
}

func isApprovalRequest(msg []byte) bool {
	return bytes.Contains(msg, []byte(`"method":"item/commandExecution/requestApproval"`))
}
