package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/acp"
	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// The agent (the child process) sends a permission request the operator
// allows once, then the very same line again, id and all: the second is a
// new request the operator must decide, not the first allow replayed.
func TestAgentReplaysAnAllowedPermissionRequest(t *testing.T) {
	s := newServer(t)
	line, err := os.ReadFile("testdata/claude-agent-acp-request-permission.json")
	if err != nil {
		t.Fatal(err)
	}
	edIn, edInW := io.Pipe() // the editor says nothing
	agOutR, agOutW := io.Pipe()
	toAgentR, toAgentW := io.Pipe()
	log := newLog()
	b := &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute, Headless: true, Log: log}
	done := make(chan error, 1)
	go func() { done <- b.Relay(context.Background(), edIn, io.Discard, toAgentW, agOutR) }()
	answers := make(chan map[string]any, 4)
	go func() {
		sc := bufio.NewScanner(toAgentR)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				answers <- m
			}
		}
	}()
	t.Cleanup(func() {
		agOutW.Close()
		edInW.Close()
		toAgentR.Close()
		select {
		case <-done:
		case <-time.After(testkit.CapWait):
			t.Errorf("the bridge did not end")
		}
	})
	send := func() {
		if _, err := agOutW.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}

	send()
	first := s.filed(t, log)
	s.decide(t, first, "allow_once")
	if a := testkit.Recv(t, answers, "the agent's answer"); a["result"].(map[string]any)["outcome"].(map[string]any)["optionId"] != "allow" {
		t.Fatalf("first answer %v, want allow", a)
	}

	send()
	second := s.filed(t, log)
	if second.ID == first.ID || second.Status != "open" {
		t.Fatalf("the replayed request was answered by the first one's allow (%s, %s)", second.ID, second.Status)
	}
	select {
	case a := <-answers:
		t.Fatalf("the agent was answered before the operator decided: %v", a)
	default:
	}
	s.decide(t, second, "reject_once")
	if a := testkit.Recv(t, answers, "the agent's second answer"); a["result"].(map[string]any)["outcome"].(map[string]any)["optionId"] != "reject" {
		t.Fatalf("second answer %v, want the operator's reject", a)
	}
}

// The agent's own words never stand for what runs: a toolCall title that
// says one thing and a rawInput that says another is filed as the rawInput's
// command (the title only in the summary), and an allow_once named "Reject"
// is still an allow, which the card and chat say in their own words.
func TestAgentWordsDoNotStandForTheCommand(t *testing.T) {
	params := json.RawMessage(`{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"git status","kind":"execute","rawInput":{"command":"rm -rf ~"}},
		"options":[{"kind":"allow_once","name":"Reject","optionId":"yes"},{"kind":"reject_once","name":"Allow","optionId":"no"},{"kind":"allow_once","name":"Allow too","optionId":"yes2"}]}`)
	p, err := acp.ParsePermission(params, acp.Who{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Request.Command != "rm -rf ~" || p.Request.Title != "Run: rm -rf ~" {
		t.Errorf("filed title %q command %q, want the rawInput's", p.Request.Title, p.Request.Command)
	}
	var effects []string
	for _, o := range p.Request.Options {
		effects = append(effects, o.ID+"="+o.Effect+":"+o.Label)
	}
	if got := strings.Join(effects, ","); got != "allow_once=allow:Reject,reject_once=deny:Allow" {
		t.Errorf("options %s: one per kind, effect from the kind", got)
	}
	if p.AgentOption["allow_once"] != "yes" || p.Reject != "no" {
		t.Errorf("agent options %v reject %q", p.AgentOption, p.Reject)
	}
}

// The agent reuses the id of a request the operator allowed from Gatehouse
// for a new one, before the editor answered the withdrawn first (an editor
// answers a cancelled request too): that late answer is the first
// request's, and never the answer to the new one.
func TestEditorsLateAnswerIsNotTheReusedIDs(t *testing.T) {
	s := newServer(t)
	first := `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"ls","kind":"execute","rawInput":{"command":"ls"}},"options":[{"kind":"allow_once","name":"Allow","optionId":"allow"},{"kind":"reject_once","name":"Reject","optionId":"reject"}]}}`
	second := strings.ReplaceAll(strings.ReplaceAll(first, `"ls"`, `"rm -rf ~"`), `"t1"`, `"t2"`)
	edInR, edInW := io.Pipe()
	edOutR, edOutW := io.Pipe()
	agOutR, agOutW := io.Pipe()
	toAgentR, toAgentW := io.Pipe()
	log := newLog()
	b := &acp.Bridge{Gatehouse: s.agent, Timeout: time.Minute, Log: log}
	done := make(chan error, 1)
	go func() { done <- b.Relay(context.Background(), edInR, edOutW, toAgentW, agOutR) }()
	lines := func(r io.Reader, ch chan map[string]any) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				ch <- m
			}
		}
	}
	toAgent, toEditor := make(chan map[string]any, 8), make(chan map[string]any, 8)
	go lines(toAgentR, toAgent)
	go lines(edOutR, toEditor)
	t.Cleanup(func() {
		agOutW.Close()
		edInW.Close()
		toAgentR.Close()
		edOutR.Close()
		select {
		case <-done:
		case <-time.After(testkit.CapWait):
			t.Errorf("the bridge did not end")
		}
	})
	write := func(w io.Writer, line string) {
		t.Helper()
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	optionOf := func(m map[string]any) any {
		r, _ := m["result"].(map[string]any)
		o, _ := r["outcome"].(map[string]any)
		return o["optionId"]
	}

	write(agOutW, first)
	testkit.Recv(t, toEditor, "the first request in the editor")
	r1 := s.filed(t, log)
	s.decide(t, r1, "allow_once")
	if a := testkit.Recv(t, toAgent, "the first answer"); optionOf(a) != "allow" {
		t.Fatalf("first answer %v", a)
	}
	testkit.Recv(t, toEditor, "the first request's withdrawal")

	write(agOutW, second)
	testkit.Recv(t, toEditor, "the second request in the editor")
	r2 := s.filed(t, log)
	// The editor's answer to the first, withdrawn, request arrives now.
	write(edInW, `{"jsonrpc":"2.0","id":7,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`)
	log.await(t, "the editor's answer is dropped")
	if r, err := s.operator.Get(context.Background(), r2.ID); err != nil || r.Status != "open" {
		t.Fatalf("the second request in Gatehouse: %v %v, want open", r, err)
	}
	s.decide(t, r2, "reject_once")
	if a := testkit.Recv(t, toAgent, "the second answer"); optionOf(a) != "reject" {
		t.Fatalf("the agent's new request got %v, want the operator's reject", a)
	}
}
