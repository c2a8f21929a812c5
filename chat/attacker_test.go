package chat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// The agent, with its own token, tries to get its request approved through
// the chat: it cannot make a link code, cannot link itself, cannot forge or
// post a click, and the operator it acts for cannot approve it from Slack.
func TestSlackAgentAsAttacker(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	alice := e.operator(t, "alice", "U0ALICE")
	agent := e.NamedToken(store.NewToken{Role: models.RoleAgent, Name: "build-bot", For: "alice"})
	id, v := e.file(t, agent, permission())
	e.slack.next(t, "chat.postMessage")

	t.Run("no link code for an agent token", func(t *testing.T) {
		if status, body := e.Do("POST", "/v1/chat/link-codes", agent, nil); status != 403 {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("a made-up code links nothing", func(t *testing.T) {
		_, body := e.slashCommand(t, "U0AGENT", "link ABCDE-FGHJK-LMNPQ-RSTUV")
		if !strings.Contains(string(body), "unknown, used or expired") {
			t.Errorf("%s", body)
		}
		e.click(t, "U0AGENT", id, v, "once")
		if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "not linked") {
			t.Errorf("ephemeral: %s", eph.str("text"))
		}
	})
	t.Run("a click it signs itself is refused", func(t *testing.T) {
		body := clickBody(t, "U0ALICE", "gatehouse_decide:once", id+"|1|once")
		for _, secret := range []string{agent, ""} {
			if status, _ := e.post(t, "/chat/slack/interactions", body, signed(body, time.Now(), secret)); status != 401 {
				t.Errorf("signed with %q: %d, want 401", secret, status)
			}
		}
		// Its bearer token is no signature either.
		h := signed(body, time.Now(), "x")
		h.Set("Authorization", "Bearer "+agent)
		if status, _ := e.post(t, "/chat/slack/interactions", body, h); status != 401 {
			t.Errorf("with its bearer token: %d, want 401", status)
		}
	})
	t.Run("a code used once links no second identity", func(t *testing.T) {
		status, body := e.Do("POST", "/v1/chat/link-codes", alice, nil)
		if status != 201 {
			t.Fatalf("%d %s", status, body)
		}
		code := strings.Split(strings.Split(string(body), `"code":"`)[1], `"`)[0]
		if _, b := e.slashCommand(t, "U0ALICE2", "link "+code); !strings.Contains(string(b), "Linked") {
			t.Fatalf("%s", b)
		}
		if _, b := e.slashCommand(t, "U0AGENT", "link "+code); !strings.Contains(string(b), "unknown, used or expired") {
			t.Errorf("second use: %s", b)
		}
	})
	t.Run("every link is in the audit chain", func(t *testing.T) {
		status, body := e.Do("GET", "/v1/audit?limit=1000", alice, nil)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if n := strings.Count(string(body), `"action":"chat_link"`); n != 2 || !strings.Contains(string(body), `U0ALICE2`) {
			t.Errorf("%d chat_link entries, want alice's two: %s", n, body)
		}
	})
	t.Run("the operator it acts for cannot approve it from Slack", func(t *testing.T) {
		body := permission()
		body["approvers"] = map[string]any{"required": 1}
		id, v := e.file(t, agent, body)
		e.slack.next(t, "chat.postMessage")
		e.click(t, "U0ALICE", id, v, "once")
		if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "may not approve it") {
			t.Errorf("ephemeral: %s", eph.str("text"))
		}
		if r := e.get(t, alice, id); r["status"] != "open" {
			t.Errorf("self-approval through Slack: %v", r["status"])
		}
	})
	if r := e.get(t, alice, id); r["status"] != "open" || r["version"] != float64(v) {
		t.Errorf("the agent moved its request: %v v%v", r["status"], r["version"])
	}
}
