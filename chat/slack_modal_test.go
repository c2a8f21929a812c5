package chat_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

func TestSlackNoteModal(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.operator(t, "alice", "U0ALICE")
	body := permission()
	body["approvers"] = map[string]any{"required": 1, "note": "required"}
	id, v := e.file(t, agent, body)
	e.slack.next(t, "chat.postMessage")

	t.Run("a plain click on a note-required request is refused", func(t *testing.T) {
		e.click(t, "U0ALICE", id, v, "once")
		if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "needs a note") {
			t.Errorf("ephemeral: %s", eph.str("text"))
		}
	})
	t.Run("the note button opens a modal on the version shown", func(t *testing.T) {
		b := clickBody(t, "U0ALICE", "gatehouse_note", fmt.Sprintf("%s|%d|", id, v))
		if status, _ := e.post(t, "/chat/slack/interactions", b, signed(b, time.Now(), slackSecret)); status != 200 {
			t.Fatalf("status %d", status)
		}
		open := e.slack.next(t, "views.open")
		view, _ := open.Args["view"].(map[string]any)
		if view["private_metadata"] != fmt.Sprintf("%s|%d|", id, v) || view["callback_id"] != "gatehouse_note" || open.str("trigger_id") == "" {
			t.Errorf("views.open %v", open.Args)
		}
	})
	submit := func(t *testing.T, note string) (int, string) {
		payload := fixture(t, "view_submission.json", map[string]string{"USER": "U0ALICE", "VALUE": fmt.Sprintf("%s|%d|", id, v), "OPTION": "once", "NOTE": note})
		b := "payload=" + url.QueryEscape(payload)
		status, resp := e.post(t, "/chat/slack/interactions", b, signed(b, time.Now(), slackSecret))
		return status, string(resp)
	}
	t.Run("an empty note is shown as an error in the modal", func(t *testing.T) {
		status, resp := submit(t, "")
		if status != 200 || !strings.Contains(resp, `"response_action":"errors"`) || !strings.Contains(resp, "needs a note") {
			t.Errorf("%d %s", status, resp)
		}
	})
	t.Run("a note decides, and reaches the agent", func(t *testing.T) {
		status, resp := submit(t, "ship it, tests are green")
		if status != 200 || !strings.Contains(resp, `"response_action":"clear"`) {
			t.Fatalf("%d %s", status, resp)
		}
		r := e.get(t, op, id)
		if r["status"] != "resolved" || r["note"] != "ship it, tests are green" || r["decided_by"] != "operator:alice" {
			t.Errorf("%v %v %v", r["status"], r["note"], r["decided_by"])
		}
	})
}

func TestSlackAnswerModal(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	op := e.operator(t, "alice", "U0ALICE")
	id, v := e.file(t, agent, map[string]any{"kind": "question", "title": "Which database for the test run?", "options": []any{}, "allow_answer": true})
	posted := e.slack.next(t, "chat.postMessage")
	if got := buttons(t, posted); len(got) != 1 || got[0] != "gatehouse_note" {
		t.Fatalf("a free-text question offers %v, want the answer button alone", got)
	}
	b := clickBody(t, "U0ALICE", "gatehouse_note", fmt.Sprintf("%s|%d|", id, v))
	e.post(t, "/chat/slack/interactions", b, signed(b, time.Now(), slackSecret))
	open := e.slack.next(t, "views.open")
	if !strings.Contains(fmt.Sprint(open.Args["view"]), "answer") {
		t.Errorf("modal has no answer field: %v", open.Args["view"])
	}
	payload := fixture(t, "view_submission.json", map[string]string{"USER": "U0ALICE", "VALUE": fmt.Sprintf("%s|%d|", id, v), "OPTION": "", "NOTE": ""})
	payload = strings.Replace(payload, `"note": {"note"`, `"answer": {"answer": {"type": "plain_text_input", "value": "PostgreSQL 17"}}, "note": {"note"`, 1)
	pb := "payload=" + url.QueryEscape(payload)
	if status, resp := e.post(t, "/chat/slack/interactions", pb, signed(pb, time.Now(), slackSecret)); status != 200 || !strings.Contains(string(resp), "clear") {
		t.Fatalf("%d %s", status, resp)
	}
	if r := e.get(t, op, id); r["answer"] != "PostgreSQL 17" || r["status"] != "resolved" {
		t.Errorf("answer %v status %v", r["answer"], r["status"])
	}
}
