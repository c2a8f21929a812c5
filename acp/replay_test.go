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
