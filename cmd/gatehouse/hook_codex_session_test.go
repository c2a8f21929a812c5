package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models"
)

// Codex's session events, from one recorded `codex exec` run (testdata/codex/README.md).
const (
	codexStart      = "sessionstart.json"
	codexPrompt     = "userpromptsubmit.json"
	codexStop       = "stop.json"
	codexStopActive = "stop-active.json"
	codexEnd        = "sessionend.json"
	codexSession    = "01a24568-3ae3-7932-9dff-e8e274783688"
)

// codexSessionHook runs the Codex hook on a fixture and checks it exited 0
// printing nothing.
func codexSessionHook(t *testing.T, url, token, name string, extra ...string) {
	t.Helper()
	res := testkit.Recv(t, start(append(codexHookArgs(url, token, "1m"), extra...), codexFixture(t, name)), "the hook to end")
	checkOutput(t, res, "")
}

func TestHookCodexSessionEvents(t *testing.T) {
	t.Run("stop opens the waiting item with the last message; a prompt moves it on", func(t *testing.T) {
		ts := newTestServer(t)
		codexSessionHook(t, ts.URL, ts.Agent, codexStart)
		codexSessionHook(t, ts.URL, ts.Agent, codexStop)
		w := waitingOf(t, ts, codexSession)
		if w == nil || w.Kind != models.KindWaiting || w.Detail != "done 1" || w.SourceRef["agent"] != "codex" || w.SourceRef["cwd"] != "/home/dev/project" || w.Title != "Codex is waiting for you in project" {
			t.Fatalf("waiting item: %+v", w)
		}
		codexSessionHook(t, ts.URL, ts.Agent, codexPrompt)
		got, _ := ts.Operator.Get(context.Background(), w.ID)
		if got.Status != models.StatusResolved || got.DecidedVia == nil || *got.DecidedVia != models.ViaMovedOn {
			t.Fatalf("after the prompt: %+v", got)
		}
	})
	t.Run("a second stop refreshes the one item; the end resolves it as ended", func(t *testing.T) {
		ts := newTestServer(t)
		codexSessionHook(t, ts.URL, ts.Agent, codexStop)
		codexSessionHook(t, ts.URL, ts.Agent, codexStopActive)
		w := waitingOf(t, ts, codexSession)
		if w == nil || w.Detail != "done 2" || w.Version != 2 {
			t.Fatalf("after the second stop: %+v", w)
		}
		codexSessionHook(t, ts.URL, ts.Agent, codexEnd)
		got, _ := ts.Operator.Get(context.Background(), w.ID)
		if got.Status != models.StatusResolved || *got.DecidedVia != models.ViaEnded {
			t.Fatalf("after the end: %+v", got)
		}
		var list api.AgentSessions
		if err := ts.Operator.Do(context.Background(), http.MethodGet, "/v1/agent-sessions", nil, nil, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Sessions) != 1 || list.Sessions[0].Agent != "codex" || list.Sessions[0].State != models.SessionEnded || list.Sessions[0].LastMessage != "done 2" {
			t.Fatalf("sessions: %+v", list.Sessions)
		}
	})
	t.Run("each event answers within its hook's timeout with the server down, refusing or hanging", func(t *testing.T) {
		budgets := hookBudgets(t, "codex")
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		release := make(chan struct{})
		hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		t.Cleanup(func() { close(release); hung.Close() })
		ts := newTestServer(t)
		for _, c := range []struct{ name, event, url, token string }{
			{codexStart, "SessionStart", down.URL, "gh_nope"},
			{codexPrompt, "UserPromptSubmit", down.URL, "gh_nope"},
			{codexStop, "Stop", down.URL, "gh_nope"},
			{codexStopActive, "Stop", down.URL, "gh_nope"},
			{codexEnd, "SessionEnd", down.URL, "gh_nope"},
			{codexStop, "Stop", ts.URL, "gh_nope"},
			{codexEnd, "SessionEnd", ts.URL, "gh_nope"},
			{codexEnd, "SessionEnd", hung.URL, "gh_nope"}, // the tightest timeout: 3 s
		} {
			t.Run(c.name+" at "+c.url, func(t *testing.T) {
				began := time.Now()
				codexSessionHook(t, c.url, c.token, c.name, "--wait-reply", "1m")
				if took, budget := time.Since(began), budgets[c.event]; budget == 0 || took >= budget {
					t.Fatalf("%s took %s; its hook's timeout is %s", c.event, took, budget)
				}
			})
		}
	})
}

func TestHookCodexWaitReply(t *testing.T) {
	t.Run("a stop waits for the operator's reply and continues the session with it", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := start(append(codexHookArgs(ts.URL, ts.Agent, "1m"), "--wait-reply", "1m"), codexFixture(t, codexStop))
		id := testkit.Recv(t, ids, "the waiting item")
		ts.answer(t, id, "Now tag the release")
		checkOutput(t, testkit.Recv(t, done, "the hook to end"), `{"decision":"block","reason":"Now tag the release"}`+"\n")
	})
	t.Run("a stop with stop_hook_active never blocks: it files the message and answers at once", func(t *testing.T) {
		ts := newTestServer(t)
		codexSessionHook(t, ts.URL, ts.Agent, codexStopActive, "--wait-reply", "10m")
		if w := waitingOf(t, ts, codexSession); w == nil || w.Detail != "done 2" || w.Status != models.StatusOpen {
			t.Fatalf("%+v", w)
		}
	})
	t.Run("an answer of blanks continues nothing", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := start(append(codexHookArgs(ts.URL, ts.Agent, "1m"), "--wait-reply", "1m"), codexFixture(t, codexStop))
		ts.answer(t, testkit.Recv(t, ids, "the waiting item"), "  \n")
		checkOutput(t, testkit.Recv(t, done, "the hook to end"), "")
	})
	t.Run("the next prompt ends the wait with no block", func(t *testing.T) {
		ts := newTestServer(t)
		ids := ts.created(t)
		done := start(append(codexHookArgs(ts.URL, ts.Agent, "1m"), "--wait-reply", "1m"), codexFixture(t, codexStop))
		testkit.Recv(t, ids, "the waiting item")
		codexSessionHook(t, ts.URL, ts.Agent, codexPrompt)
		checkOutput(t, testkit.Recv(t, done, "the hook to end"), "")
	})
}

func TestHookCodexPrintSettings(t *testing.T) {
	budgets := hookBudgets(t, "codex")
	for _, ev := range []string{"PermissionRequest", "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} {
		if budgets[ev] == 0 {
			t.Fatalf("no %s hook: %v", ev, budgets)
		}
	}
	if budgets["SessionEnd"] > 3*time.Second {
		t.Fatalf("SessionEnd's timeout %s: Codex cuts it to 3s", budgets["SessionEnd"])
	}
	res := testkit.Recv(t, start([]string{"hook", "codex", "--print-settings", "--wait-reply", "10m"}, nil), "the command to end")
	var got struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string
				Timeout int
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if stop := got.Hooks["Stop"][0].Hooks[0]; stop.Command != "gatehouse hook codex --wait-reply 10m0s" || stop.Timeout <= 600 {
		t.Fatalf("the Stop hook with --wait-reply: %+v", stop)
	}
}
