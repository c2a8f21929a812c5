package conformance_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/client"
	"github.com/gatehousehq/gatehouse/codexbridge"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// A bridge column: the agent (an ACP agent, or codex app-server) asks the
// bridge, the bridge files in Gatehouse, the operator decides through the
// API, and the bridge answers the agent. The operator's side is the API's;
// what this column adds is what reaches the agent.
type bridge struct {
	rest
	kind string // acp or codex
	n    int
}

func startACP(t *testing.T, dialect string) surface {
	return &bridge{rest: rest{g: newGatehouse(t, dialect, "", nil), route: "decide"}, kind: "acp"}
}

func startCodex(t *testing.T, dialect string) surface {
	return &bridge{rest: rest{g: newGatehouse(t, dialect, "", nil), route: "decide"}, kind: "codex"}
}

// relay is one bridge relaying for one request, the test playing the agent
// (or Codex) on one side and an editor that never answers on the other.
type relay struct {
	toBridge *io.PipeWriter
	answers  chan []byte       // what the bridge sent the agent
	effects  map[string]string // the agent's answer -> its effect
	log      *bridgeLog
}

// bridgeLog hands over the bridge's log lines.
type bridgeLog struct {
	mu    sync.Mutex
	part  []byte
	lines chan string
}

func (l *bridgeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := -1
		for j, c := range l.part {
			if c == '\n' {
				i = j
				break
			}
		}
		if i < 0 {
			return len(p), nil
		}
		select { // read only while filing: a full channel drops, never blocks the bridge
		case l.lines <- string(l.part[:i]):
		default:
		}
		l.part = l.part[i+1:]
	}
}

var (
	filedRe    = regexp.MustCompile(`filed as (req_\S+):`)
	notFiledRe = regexp.MustCompile(`not filed[^:]*: (?:gatehouse: )?\d{3} ([a-z_]+):`) // the client's error, after the bridge's words
)

// file has the agent ask, and waits for the bridge to file it (the
// request, as the operator reads it) or to be refused (the code).
func (b *bridge) file(t *testing.T, f filing) (*shown, string) {
	t.Helper()
	b.n++
	r := b.start(t)
	// A bridge's filing carries no policy of its own: the rules give it the
	// case's, from a word in its title, which the bridge writes from the
	// command.
	cmd := "echo " + f.title
	switch {
	case f.policy == nil:
	case f.policy.required == 2 && len(f.policy.groups) == 0:
		cmd += " " + twoPersonWord
	case f.policy.required == 1 && slices.Equal(f.policy.groups, []string{"release"}):
		cmd += " " + releaseOnlyWord
	default:
		t.Fatalf("no rule gives a bridge's filing the policy %+v", *f.policy)
	}
	var ask []byte
	switch b.kind {
	case "acp":
		kinds := map[string]string{"allow": acp.KindAllowOnce, "deny": acp.KindRejectOnce}
		var opts []map[string]string
		for _, o := range f.options {
			opts = append(opts, map[string]string{"optionId": o.id, "name": o.label, "kind": kinds[o.effect]})
			r.effects[o.id] = o.effect
		}
		ask, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": b.n, "method": acp.MethodRequestPermission, "params": map[string]any{
			"sessionId": "sess-conformance", "options": opts,
			"toolCall": map[string]any{"toolCallId": fmt.Sprint("call-", b.n), "title": cmd, "kind": "execute", "rawInput": map[string]string{"command": cmd}}}})
	case "codex":
		r.effects["accept"], r.effects["decline"] = "allow", "deny"
		ask, _ = json.Marshal(map[string]any{"id": b.n, "method": codexbridge.MethodCommandApproval, "params": map[string]any{
			"threadId": "thr-conformance", "turnId": fmt.Sprint("turn-", b.n), "itemId": fmt.Sprint("call_", b.n),
			"command": "/bin/bash -lc '" + cmd + "'", "cwd": "/home/dev/project", "commandActions": []map[string]string{{"type": "unknown", "command": cmd}},
			"availableDecisions": []string{"accept", "decline"}}})
	}
	if _, err := r.toBridge.Write(append(ask, '\n')); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(testkit.CapWait)
	var seen []string
	for {
		select {
		case line := <-r.log.lines:
			seen = append(seen, line)
			if m := filedRe.FindStringSubmatch(line); m != nil {
				rec := b.g.record(t, m[1])
				return &shown{id: m[1], data: bridgeShown{rec: rec, relay: r}}, ""
			}
			if m := notFiledRe.FindStringSubmatch(line); m != nil {
				return nil, m[1]
			}
		case <-deadline:
			t.Fatalf("the %s bridge neither filed nor was refused; it logged:\n%s", b.kind, strings.Join(seen, "\n"))
		}
	}
}

type bridgeShown struct {
	rec   map[string]any
	relay *relay
}

// start runs a bridge until the test ends.
func (b *bridge) start(t *testing.T) *relay {
	t.Helper()
	editorR, editorW := io.Pipe()
	toEditorR, toEditorW := io.Pipe()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	r := &relay{toBridge: fromAgentW, answers: make(chan []byte, 16), effects: map[string]string{}, log: &bridgeLog{lines: make(chan string, 256)}}
	gh := client.New(b.g.URL, b.g.agent)
	gh.HTTP = b.g.HTTP
	done := make(chan error, 1)
	go func() {
		switch b.kind {
		case "acp":
			br := &acp.Bridge{Gatehouse: gh, Timeout: 10 * time.Minute, Log: r.log}
			done <- br.Relay(context.Background(), editorR, toEditorW, toAgentW, fromAgentR)
		case "codex":
			br := &codexbridge.Bridge{Gatehouse: gh, ExpiresIn: 600, Log: r.log}
			done <- br.Relay(context.Background(), editorR, toEditorW, toAgentW, fromAgentR)
		}
	}()
	go func() { _, _ = io.Copy(io.Discard, toEditorR) }()
	go func() {
		sc := bufio.NewScanner(toAgentR)
		for sc.Scan() {
			r.answers <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		editorW.Close()
		fromAgentW.Close()
		select {
		case <-done:
		case <-time.After(testkit.CapWait):
			t.Errorf("the %s bridge did not end", b.kind)
		}
		toEditorW.Close()
	})
	return r
}

func (b *bridge) gatehouse() *gatehouse { return b.g }

func (b *bridge) edit(t *testing.T, s *shown) { b.g.editREST(t, s.id) }

// decide is the operator's decide through the API, on the record filed.
func (b *bridge) decide(t *testing.T, s *shown, a act) answer {
	t.Helper()
	return b.rest.decide(t, &shown{id: s.id, data: s.data.(bridgeShown).rec}, a)
}

func (b *bridge) replay(t *testing.T, s *shown) answer { return b.rest.send(t) }

// delivered is the effect of what the bridge answered the agent: an ACP
// outcome's optionId, or Codex's decision.
func (b *bridge) delivered(t *testing.T, s *shown, due bool) string {
	t.Helper()
	r := s.data.(bridgeShown).relay
	var line []byte
	if due {
		line = testkit.Recv(t, r.answers, "the bridge's answer to the agent")
	} else {
		select {
		case line = <-r.answers:
		default:
			return ""
		}
	}
	var m struct {
		Result struct {
			Outcome struct {
				OptionID string `json:"optionId"`
			} `json:"outcome"`
			Decision string `json:"decision"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("the bridge answered the agent %s: %v", line, err)
	}
	if e, ok := r.effects[m.Result.Outcome.OptionID+m.Result.Decision]; ok {
		return e
	}
	return "unknown answer " + string(line)
}
