package chat_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

var update = flag.Bool("update", false, "rewrite the recorded message JSON in testdata")

// permission is a permission request with a command, a session and a cwd.
func permission() map[string]any {
	return map[string]any{"kind": "permission", "title": "Run git push origin main", "tool": "Bash", "command": "git push origin main",
		"source": "session", "source_ref": map[string]string{"session": "0123456789abcdef", "cwd": "/home/dev/repo"}, "expires_in": 600}
}

func TestSlackPostsRoutedRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newChatEnv(t, dialect)
		agent := e.Token(models.RoleAgent, "build-bot")
		// Filed first: a kind no route names, so it is never posted.
		unrouted, _ := e.file(t, agent, map[string]any{"kind": "approval", "title": "unrouted"})
		body := permission()
		body["risk"] = "high"
		id, _ := e.file(t, agent, body)

		t.Run("full: title, who, command, time left, a button per option with its effect", func(t *testing.T) {
			c := e.slack.next(t, "chat.postMessage")
			if c.str("channel") != "C0OPS" {
				c, _ = e.slack.next(t, "chat.postMessage"), c
			}
			if c.str("channel") != "C0OPS" {
				t.Fatalf("posted to %s, want C0OPS", c.str("channel"))
			}
			text := texts(t, c)
			for _, want := range []string{"Run git push origin main [high risk]", "filed by agent:build-bot", "session 01234567", "cwd /home/dev/repo",
				"git push origin main", "Expires <!date^", "Allow once — lets this command run once", "Deny — blocks this command", id + "|1|once", id + "|1|deny"} {
				if !strings.Contains(text, want) {
					t.Errorf("message lacks %q:\n%s", want, text)
				}
			}
			if got := buttons(t, c); !slices.Equal(got, []string{"gatehouse_decide:once", "gatehouse_decide:deny", "gatehouse_note"}) {
				t.Errorf("buttons %v", got)
			}
			golden(t, "post_full.json", c, id)
		})
		t.Run("generic: no title, command or cwd", func(t *testing.T) {
			rows, err := e.Store.ChatMessagesOf(context.Background(), id)
			if err != nil || len(rows) != 2 {
				t.Fatalf("outbox rows %v, %v; want ops and pager", rows, err)
			}
			var c slackCall
			for c.str("channel") != "C0PAGER" {
				c = e.slack.next(t, "chat.postMessage")
			}
			text := texts(t, c)
			for _, leak := range []string{"git push", "/home/dev", "0123456", "Allow once"} {
				if strings.Contains(text, leak) || strings.Contains(c.str("text"), leak) {
					t.Errorf("generic message shows %q:\n%s", leak, text)
				}
			}
			if !strings.Contains(text, "1 request needs you") || !strings.Contains(text, "/requests/"+id) {
				t.Errorf("generic message: %s", text)
			}
			golden(t, "post_generic.json", c, id)
		})
		t.Run("a request no route names is not posted", func(t *testing.T) {
			rows, err := e.Store.ChatMessagesOf(context.Background(), unrouted)
			if err != nil || len(rows) != 0 {
				t.Fatalf("rows %v, %v", rows, err)
			}
		})
	})
}

func TestSlackClickDecides(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newChatEnv(t, dialect)
		agent := e.Token(models.RoleAgent, "build-bot")
		op := e.operator(t, "alice", "U0ALICE")
		id, v := e.file(t, agent, permission())
		posted := e.slack.next(t, "chat.postMessage")

		status, _ := e.click(t, "U0ALICE", id, v, "once")
		if status != 200 {
			t.Fatalf("click: %d", status)
		}
		r := e.get(t, op, id)
		if r["status"] != "resolved" || r["decision"] != "once" || r["decided_by"] != "operator:alice" || r["decided_via"] != "slack" {
			t.Fatalf("after the click: %v %v %v %v", r["status"], r["decision"], r["decided_by"], r["decided_via"])
		}
		if eph := e.slack.next(t, "chat.postEphemeral"); eph.str("user") != "U0ALICE" || !strings.Contains(eph.str("text"), "Done: Allow once") {
			t.Errorf("ephemeral %v", eph.Args)
		}
		up := e.slack.next(t, "chat.update")
		if up.str("ts") != "1700000000.000001" || up.str("channel") != posted.str("channel") {
			t.Errorf("update of %s/%s, want the posted message", up.str("channel"), up.str("ts"))
		}
		if b := buttons(t, up); len(b) != 0 {
			t.Errorf("buttons left after the decision: %v", b)
		}
		if text := texts(t, up); !strings.Contains(text, "Allow once — approved by operator:alice via slack at ") {
			t.Errorf("update does not say how, by whom, when: %s", text)
		}
		golden(t, "update_decided.json", up, id)
	})
}

func TestSlackStaleClick(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.operator(t, "alice", "U0ALICE")
	e.operator(t, "bob", "U0BOB")

	t.Run("decided elsewhere", func(t *testing.T) {
		id, v := e.file(t, agent, permission())
		e.slack.next(t, "chat.postMessage")
		if status, body := e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": v, "decision": "deny"}); status != 200 {
			t.Fatalf("page decide: %d %s", status, body)
		}
		e.click(t, "U0BOB", id, v, "once")
		eph := e.slack.next(t, "chat.postEphemeral")
		if !strings.Contains(eph.str("text"), "decided elsewhere — Deny — denied by operator:alice via api") {
			t.Errorf("ephemeral: %s", eph.str("text"))
		}
		if r := e.get(t, op, id); r["decision"] != "deny" {
			t.Errorf("the stale click changed the decision: %v", r["decision"])
		}
		e.slack.next(t, "chat.update")
	})
	t.Run("edited since the message", func(t *testing.T) {
		body := permission()
		body["sealed"] = false
		id, v := e.file(t, agent, body)
		e.slack.next(t, "chat.postMessage")
		if status, b := e.Do("PATCH", "/v1/requests/"+id, agent, map[string]any{"title": "Run git push --force origin main"}); status != 200 {
			t.Fatalf("patch: %d %s", status, b)
		}
		up := e.slack.next(t, "chat.update") // the message follows the edit
		if !strings.Contains(texts(t, up), id+"|2|once") {
			t.Errorf("edited message still offers version 1: %s", texts(t, up))
		}
		e.click(t, "U0BOB", id, v, "once")
		if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "changed since this message showed it") {
			t.Errorf("ephemeral: %s", eph.str("text"))
		}
		if r := e.get(t, op, id); r["status"] != "open" {
			t.Errorf("a click on version 1 decided version 2: %v", r["status"])
		}
	})
}

func TestSlackPageDecisionUpdatesMessage(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "carol"})
	id, v := e.file(t, agent, permission())
	e.slack.next(t, "chat.postMessage")
	if status, body := e.Do("POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": v, "decision": "deny", "note": "not on a Friday"}); status != 200 {
		t.Fatalf("decide: %d %s", status, body)
	}
	up := e.slack.next(t, "chat.update")
	if text := texts(t, up); !strings.Contains(text, "Deny — denied by operator:carol via api") || len(buttons(t, up)) != 0 {
		t.Errorf("update after a page decision: %s", text)
	}
	t.Run("expiry too", func(t *testing.T) {
		body := permission()
		body["expires_in"] = 1
		body["default_option"] = "deny"
		id, _ := e.file(t, agent, body)
		e.slack.next(t, "chat.postMessage")
		up := e.slack.next(t, "chat.update")
		if text := texts(t, up); !strings.Contains(text, "Deny — denied as the default, on expiry") {
			t.Errorf("update after expiry of %s: %s", id, text)
		}
	})
}

func TestSlackTwoPersonApproval(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newChatEnv(t, dialect)
		agent := e.Token(models.RoleAgent, "build-bot")
		e.operator(t, "alice", "U0ALICE", "release")
		bob := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "bob", Groups: []string{"release"}})
		body := permission()
		body["approvers"] = map[string]any{"groups": []string{"release"}, "required": 2}
		id, v := e.file(t, agent, body)
		e.slack.next(t, "chat.postMessage")

		e.click(t, "U0ALICE", id, v, "once")
		if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "Vote recorded: 1 of 2 approvals — operator:alice: Allow once (allow)") {
			t.Errorf("ephemeral: %s", eph.str("text"))
		}
		up := e.slack.next(t, "chat.update")
		if text := texts(t, up); !strings.Contains(text, "1 of 2 approvals — operator:alice: Allow once (allow)") || !strings.Contains(text, id+"|2|once") {
			t.Errorf("the vote is not shown live, or the buttons are not on version 2: %s", text)
		}
		r := e.get(t, bob, id)
		if r["status"] != "open" || r["version"] != float64(2) {
			t.Fatalf("after one vote: %v v%v", r["status"], r["version"])
		}
		t.Run("the same person again is refused", func(t *testing.T) {
			e.click(t, "U0ALICE", id, 2, "once")
			if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "already voted") {
				t.Errorf("ephemeral: %s", eph.str("text"))
			}
		})
		if status, b := e.Do("POST", "/v1/requests/"+id+"/decide", bob, map[string]any{"version": 2, "decision": "once"}); status != 200 {
			t.Fatalf("bob on the page: %d %s", status, b)
		}
		if r := e.get(t, bob, id); r["status"] != "resolved" {
			t.Fatalf("two approvals did not resolve it: %v", r["status"])
		}
		up = e.slack.next(t, "chat.update")
		if text := texts(t, up); !strings.Contains(text, "Allow once — approved by operator:bob via api") || len(buttons(t, up)) != 0 {
			t.Errorf("final update: %s", text)
		}
	})
}

func TestSlackUnlinkedUserRefused(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.operator(t, "alice", "U0ALICE")
	id, v := e.file(t, agent, permission())
	e.slack.next(t, "chat.postMessage")

	for _, uid := range []string{"U0STRANGER", "U0ALICE"} {
		t.Run(uid, func(t *testing.T) {
			body := clickBody(t, uid, "gatehouse_decide:once", id+"|1|once")
			if uid == "U0ALICE" { // alice's user id in another workspace is another identity
				body = strings.Replace(body, "T0EXAMPLE", "T0OTHER", -1)
			}
			e.post(t, "/chat/slack/interactions", body, signed(body, time.Now(), slackSecret))
			if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "not linked") {
				t.Errorf("ephemeral: %s", eph.str("text"))
			}
			if r := e.get(t, op, id); r["status"] != "open" || r["version"] != float64(v) {
				t.Errorf("an unlinked click changed the request: %v v%v", r["status"], r["version"])
			}
		})
	}
	t.Run("a revoked operator's link decides nothing", func(t *testing.T) {
		if status, b := e.Do("DELETE", "/v1/tokens/alice", op, nil); status != 200 {
			t.Fatalf("revoke: %d %s", status, b)
		}
		e.click(t, "U0ALICE", id, v, "once")
		if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "no live token") {
			t.Errorf("ephemeral: %s", eph.str("text"))
		}
	})
}

func TestSlackCallbacksVerified(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.operator(t, "alice", "U0ALICE")
	body := permission()
	body["approvers"] = map[string]any{"required": 2}
	id, v := e.file(t, agent, body)
	e.slack.next(t, "chat.postMessage")
	click := clickBody(t, "U0ALICE", "gatehouse_decide:once", id+"|1|once")

	for _, tc := range []struct {
		name string
		h    func() map[string][]string
	}{
		{"no signature", func() map[string][]string {
			return map[string][]string{"Content-Type": {"application/x-www-form-urlencoded"}}
		}},
		{"another secret", func() map[string][]string { return signed(click, time.Now(), "not-the-secret") }},
		{"six minutes old", func() map[string][]string { return signed(click, time.Now().Add(-6*time.Minute), slackSecret) }},
		{"body changed after signing", func() map[string][]string {
			return signed(strings.Replace(click, "U0ALICE", "U0ALICF", 1), time.Now(), slackSecret)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, _ := e.post(t, "/chat/slack/interactions", click, tc.h()); status != 401 {
				t.Errorf("status %d, want 401", status)
			}
		})
	}
	if r := e.get(t, op, id); r["version"] != float64(v) || r["approvals"].(map[string]any)["votes"] != nil && len(r["approvals"].(map[string]any)["votes"].([]any)) != 0 {
		t.Fatalf("a refused callback voted: %v", r["approvals"])
	}
	t.Run("a replayed callback acts once", func(t *testing.T) {
		h := signed(click, time.Now(), slackSecret)
		for range 2 {
			if status, _ := e.post(t, "/chat/slack/interactions", click, h); status != 200 {
				t.Fatalf("status %d", status)
			}
		}
		if n := e.slack.count("chat.postEphemeral"); n != 1 {
			t.Errorf("%d replies to one click sent twice, want 1", n)
		}
		if votes := e.get(t, op, id)["approvals"].(map[string]any)["votes"].([]any); len(votes) != 1 {
			t.Errorf("votes %v", votes)
		}
	})
}

func TestSlackRetriesAfter429(t *testing.T) {
	st, changes := storetest.Store(t, "sqlite")
	sl := newSlackStandIn(t, slackToken, "C0OPS", "C0PAGER")
	sl.fail("chat.postMessage", 429)
	e := startChat(t, st, changes, sl, "")
	agent := e.Token(models.RoleAgent, "build-bot")
	id, _ := e.file(t, agent, permission())
	first := sl.next(t, "chat.postMessage")
	second := sl.next(t, "chat.postMessage")
	if gap := second.At.Sub(first.At); gap < time.Second {
		t.Errorf("retried %s after a 429 with Retry-After: 1", gap)
	}
	rows := waitRows(t, e, id, func(m store.ChatMessage) bool { return m.Ref != "" })
	if rows[0].Ref != "1700000000.000001" || rows[0].DoneVersion != 1 {
		t.Errorf("row %+v", rows[0])
	}
	if n := sl.count("chat.postMessage"); n != 2 {
		t.Errorf("%d posts, want the refused one and one more", n)
	}
}

func TestSlackRestartEditsOnce(t *testing.T) {
	st, changes := storetest.Store(t, "sqlite")
	sl := newSlackStandIn(t, slackToken, "C0OPS", "C0PAGER")
	e := startChat(t, st, changes, sl, "")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "carol"})
	id, v := e.file(t, agent, permission())
	sl.next(t, "chat.postMessage")
	waitRows(t, e, id, func(m store.ChatMessage) bool { return m.Ref != "" })
	e.Stop()

	// Decided while no chat worker runs: nothing announces it to a chat.
	p := models.Principal{ID: "tok", Role: models.RoleOperator, Name: "carol"}
	if _, err := st.Decide(context.Background(), id, models.Decision{Version: v, Option: "deny", By: p.Label(), Via: "api", Voter: &p}); err != nil {
		t.Fatal(err)
	}
	e = startChat(t, st, changes, sl, e.path)
	up := sl.next(t, "chat.update")
	if !strings.Contains(texts(t, up), "Deny — denied by operator:carol via api") {
		t.Errorf("update: %s", texts(t, up))
	}
	waitRows(t, e, id, func(m store.ChatMessage) bool { return m.DoneStatus == models.StatusResolved })
	// One more change on the bus, and the worker has looked again.
	id2, _ := e.file(t, agent, permission())
	sl.next(t, "chat.postMessage")
	waitRows(t, e, id2, func(m store.ChatMessage) bool { return m.Ref != "" })
	if n := sl.count("chat.update"); n != 1 {
		t.Errorf("%d edits, want exactly 1", n)
	}
	if n := sl.count("chat.postMessage"); n != 2 {
		t.Errorf("%d posts, want 2 (one per request): the restart posted again", n)
	}
	_ = op
}

// waitRows waits until every outbox row of id passes ok, looking again
// after each send the worker records.
func waitRows(t *testing.T, e *chatEnv, id string, ok func(store.ChatMessage) bool) []store.ChatMessage {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		rows, err := e.Store.ChatMessagesOf(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 && !slices.ContainsFunc(rows, func(m store.ChatMessage) bool { return !ok(m) }) {
			return rows
		}
		select {
		case <-e.sent:
		case <-deadline:
			t.Fatalf("outbox rows of %s never got there: %+v", id, rows)
		}
	}
}

var (
	reqID   = regexp.MustCompile(`req_[0-9a-f]+`)
	dateRef = regexp.MustCompile(`<!date\^\d+\^`)
	port    = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	when    = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d UTC|at \d\d:\d\d UTC`)
)

// golden compares a call's arguments with testdata/slack/NAME, the
// recorded message JSON docs/chat.md shows; -update rewrites it.
func golden(t *testing.T, name string, c slackCall, id string) {
	t.Helper()
	rec := map[string]any{"method": c.Method, "channel": c.str("channel"), "text": c.str("text"), "blocks": c.blocks(t)}
	if ts := c.str("ts"); ts != "" {
		rec["ts"] = ts
	}
	goldenJSON(t, filepath.Join("slack", name), rec)
}

// goldenJSON compares rec, with ids, ports and times made stable, with
// testdata/NAME; -update rewrites it.
func goldenJSON(t *testing.T, name string, rec map[string]any) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		t.Fatal(err)
	}
	got := reqID.ReplaceAllString(b.String(), "req_0123456789abcdef01234567")
	got = dateRef.ReplaceAllString(got, "<!date^1700000600^")
	got = port.ReplaceAllString(got, "gatehouse.example.com")
	got = when.ReplaceAllStringFunc(got, func(s string) string {
		if strings.HasPrefix(s, "at ") {
			return "at 12:00 UTC"
		}
		return "2023-11-14 22:23 UTC"
	})
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to record it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what was sent:\n%s", name, got)
	}
}

// A Slack that answers nothing but errors delays only its messages: a
// decision on the page is answered, and its waiter released, at once.
func TestSlackOutageDoesNotBlockDecisions(t *testing.T) {
	st, changes := storetest.Store(t, "sqlite")
	sl := newSlackStandIn(t, slackToken, "C0OPS", "C0PAGER")
	sl.fail("chat.postMessage", 500, 500, 500, 500, 500, 500, 500, 500)
	e := startChat(t, st, changes, sl, "")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "carol"})
	id, v := e.file(t, agent, permission())
	sl.next(t, "chat.postMessage") // refused
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if status, body := e.DoCtx(ctx, "POST", "/v1/requests/"+id+"/decide", op, map[string]any{"version": v, "decision": "deny"}); status != 200 {
		t.Fatalf("decide during the outage: %d %s", status, body)
	}
	if status, body := e.DoCtx(ctx, "GET", "/v1/requests/"+id+"/wait?timeout=5", agent, nil); status != 200 || !strings.Contains(string(body), `"status":"resolved"`) {
		t.Fatalf("the agent's wait: %d %s", status, body)
	}
	rows := waitRows(t, e, id, func(m store.ChatMessage) bool { return m.Attempts > 0 })
	if rows[0].Ref != "" || !strings.Contains(rows[0].LastError, "500") {
		t.Errorf("row %+v", rows[0])
	}
}

// An option that would also remember an allow (an ACP agent's allow_always)
// is labelled in chat as what a chat click does: it allows once.
func TestSlackRememberOptionAllowsOnce(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "acp-bot")
	body := permission()
	body["options"] = []map[string]any{
		{"id": "allow_always", "label": "Always Allow", "effect": "allow", "remember": map[string]any{"scope": "session", "for": "until_revoked"}},
		{"id": "reject_once", "label": "Reject", "effect": "deny"},
	}
	e.file(t, agent, body)
	c := e.slack.next(t, "chat.postMessage")
	for c.str("channel") != "C0OPS" {
		c = e.slack.next(t, "chat.postMessage")
	}
	if text := texts(t, c); !strings.Contains(text, "Always Allow — lets this command run once (remember it on the page)") {
		t.Errorf("the remembering option's button says:\n%s", text)
	}
}
