package chat_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// lyingOptions are an agent's options whose labels say the opposite of their
// effects, the allow's label padded so "label — effect" passes a button's
// 75 characters. The labels lie in German: a filing that says "Deny" on an
// allow in English is refused as misleading, but no word list knows every
// language, so the surfaces still say each effect in their own words.
func lyingOptions() []map[string]any {
	return []map[string]any{
		{"id": "go", "label": "Ablehnen — blockiert diesen Befehl" + strings.Repeat(" ", 32) + ".", "effect": "allow"},
		{"id": "stop", "label": "Einmal erlauben", "effect": "deny"},
	}
}

// The agent labels an allow "Ablehnen" (deny): every message and reply says what the
// decision did in Gatehouse's words, the button cannot lose its effect to a
// long label, and the generic channel shows no label at all.
func TestChatMessagesSayTheEffectNotTheLabel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newChatEnv(t, dialect)
		agent := e.Token(models.RoleAgent, "build-bot")
		e.operator(t, "alice", "U0ALICE", "release")
		bob := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "bob", Groups: []string{"release"}})
		body := permission()
		body["risk"] = "high" // full to C0OPS, generic to C0PAGER
		body["options"] = lyingOptions()
		body["approvers"] = map[string]any{"groups": []string{"release"}, "required": 2}
		id, v := e.file(t, agent, body)
		posts := map[string]slackCall{}
		for range 2 {
			c := e.slack.next(t, "chat.postMessage")
			posts[c.str("channel")] = c
		}

		t.Run("the allow's button keeps its effect whatever the label's length", func(t *testing.T) {
			text := texts(t, posts["C0OPS"])
			if !strings.Contains(text, "— lets this command go ahead") {
				t.Errorf("the allow button lost its effect to the label: %s", text)
			}
		})
		e.click(t, "U0ALICE", id, v, "go")
		e.slack.next(t, "chat.postEphemeral")
		ups := map[string]slackCall{}
		for range 2 {
			c := e.slack.next(t, "chat.update")
			ups[c.str("channel")] = c
		}
		t.Run("a vote says what it votes for", func(t *testing.T) {
			if text := texts(t, ups["C0OPS"]); !strings.Contains(text, "operator:alice: Ablehnen") || !strings.Contains(text, "(allow)") {
				t.Errorf("full: %s", text)
			}
			if text := texts(t, ups["C0PAGER"]); !strings.Contains(text, "operator:alice: allow") || strings.Contains(text, "Ablehnen") {
				t.Errorf("generic: %s", text)
			}
		})
		if status, b := e.Do("POST", "/v1/requests/"+id+"/decide", bob, map[string]any{"version": v + 1, "decision": "go"}); status != 200 {
			t.Fatalf("bob: %d %s", status, b)
		}
		for range 2 {
			c := e.slack.next(t, "chat.update")
			ups[c.str("channel")] = c
		}
		t.Run("full: the settled message says it was allowed", func(t *testing.T) {
			if text := texts(t, ups["C0OPS"]); !strings.Contains(text, "— approved by operator:bob via api at ") {
				t.Errorf("the message reads as a deny: %s", text)
			}
		})
		t.Run("generic: no label, and allowed", func(t *testing.T) {
			text := texts(t, ups["C0PAGER"])
			if strings.Contains(text, "Ablehnen") || !strings.Contains(text, "Approved by operator:bob via api at ") {
				t.Errorf("generic: %s", text)
			}
		})
		t.Run("a click after says the effect too", func(t *testing.T) {
			e.operator(t, "carol", "U0CAROL")
			e.click(t, "U0CAROL", id, v+1, "stop")
			if eph := e.slack.next(t, "chat.postEphemeral"); !strings.Contains(eph.str("text"), "approved by operator:bob") {
				t.Errorf("ephemeral: %s", eph.str("text"))
			}
		})
	})
}

// Two chat identities linked to one operator: the trail says which one
// clicked, for a vote and for the deciding click alike.
func TestChatDecisionAuditNamesTheChatUser(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newChatEnv(t, dialect)
		agent := e.Token(models.RoleAgent, "build-bot")
		op := e.operator(t, "alice", "U0ALICE", "release")
		status, body := e.Do("POST", "/v1/chat/link-codes", op, nil)
		if status != 201 {
			t.Fatalf("%d %s", status, body)
		}
		if _, b := e.slashCommand(t, "U0SOMEONE", "link "+strings.Split(strings.Split(string(body), `"code":"`)[1], `"`)[0]); !strings.Contains(string(b), "Linked") {
			t.Fatalf("%s", b)
		}
		e.operator(t, "bob", "U0BOB", "release")
		req := permission()
		req["approvers"] = map[string]any{"groups": []string{"release"}, "required": 2}
		id, v := e.file(t, agent, req)
		e.slack.next(t, "chat.postMessage")
		e.click(t, "U0SOMEONE", id, v, "once")
		e.slack.next(t, "chat.postEphemeral")
		e.click(t, "U0BOB", id, v+1, "once")
		e.slack.next(t, "chat.postEphemeral")
		status, body = e.Do("GET", "/v1/requests/"+id+"/audit", op, nil)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		for _, want := range []string{`"chat_user":"slack:T0EXAMPLE/U0SOMEONE"`, `"chat_user":"slack:T0EXAMPLE/U0BOB"`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("the trail lacks %s: %s", want, body)
			}
		}
	})
}

// An option label is the filer's text: in the settled message it is plain
// text, so a label cannot bold, strike or link (Slack links a bare URL in
// mrkdwn).
func TestSlackSettledMessageLabelIsPlainText(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	e.operator(t, "alice", "U0ALICE")
	body := permission()
	body["options"] = []map[string]any{{"id": "go", "label": "*Abgelehnt* ~by rule~ https://evil.example/ok", "effect": "allow"}}
	id, v := e.file(t, agent, body)
	e.slack.next(t, "chat.postMessage")
	e.click(t, "U0ALICE", id, v, "go")
	eph := e.slack.next(t, "chat.postEphemeral")
	up := e.slack.next(t, "chat.update")
	if eph.str("blocks") == "" {
		t.Errorf("the clicker's reply, holding the label, is mrkdwn text with no plain block: %v", eph.Args)
	}
	for _, b := range append(up.blocks(t), eph.blocks(t)...) {
		text, _ := b["text"].(map[string]any)
		if s, _ := text["text"].(string); strings.Contains(s, "evil.example") && text["type"] != "plain_text" {
			t.Errorf("the label reaches Slack as %v: %v", text["type"], b)
		}
	}
}

// A Telegram reply decides the request of the message it replies to: a
// reply to request A's message with a note never touches request B.
func TestTelegramReplyDecidesOnlyItsMessage(t *testing.T) {
	e := newBotEnv(t, "sqlite", nil)
	e.bot.next(t, "setWebhook")
	op := e.link(t, "alice", 42)
	agent := e.Token(models.RoleAgent, "build-bot")
	env := &chatEnv{Env: e.Env}
	a, _ := env.file(t, agent, permission())
	refA := e.bot.next(t, "sendMessage").str("_message_id")
	b, _ := env.file(t, agent, permission())
	e.bot.next(t, "sendMessage")

	e.say(t, 42, "allow fine by me", refA)
	if got := e.bot.next(t, "sendMessage"); !strings.Contains(got.str("text"), "Done: Allow once — approved by operator:alice via telegram") {
		t.Errorf("reply answer: %s", got.str("text"))
	}
	if r := e.get(t, op, a); r["decision"] != "once" || r["note"] != "fine by me" {
		t.Errorf("A: %v %v", r["decision"], r["note"])
	}
	if r := e.get(t, op, b); r["status"] != "open" {
		t.Errorf("a reply to A's message moved B: %v", r["status"])
	}
}

// The agent files a detail (and a Telegram command) with a line that reads
// like Gatehouse's outcome: it reaches the chat set off as the filer's text
// (a Slack quote, Telegram pre and blockquote entities), never as a line of
// its own like the real outcome's.
func TestChatFilerTextCannotPassForTheOutcome(t *testing.T) {
	fake := "Deny — denied by operator:bob via page at 12:00 UTC"
	body := permission()
	body["detail"] = "pushes the release\n\n" + fake
	body["command"] = "git push origin main\n\n" + fake

	t.Run("slack", func(t *testing.T) {
		e := newChatEnv(t, "sqlite")
		agent := e.Token(models.RoleAgent, "build-bot")
		e.file(t, agent, body)
		c := e.slack.next(t, "chat.postMessage")
		for _, b := range c.blocks(t) {
			raw, _ := json.Marshal(b)
			if strings.Contains(string(raw), "pushes the release") && (b["type"] != "rich_text" || !strings.Contains(string(raw), `"rich_text_quote"`)) {
				t.Errorf("the detail is not quoted: %s", raw)
			}
		}
	})
	t.Run("telegram", func(t *testing.T) {
		e := newBotEnv(t, "sqlite", nil)
		e.bot.next(t, "setWebhook")
		agent := e.Token(models.RoleAgent, "build-bot")
		(&chatEnv{Env: e.Env}).file(t, agent, body)
		m := e.bot.next(t, "sendMessage")
		var ents []struct {
			Type           string
			Offset, Length int
		}
		if err := json.Unmarshal([]byte(m.str("entities")), &ents); err != nil {
			t.Fatalf("entities %q: %v", m.str("entities"), err)
		}
		units := utf16.Encode([]rune(m.str("text")))
		covered := map[string]string{}
		for _, en := range ents {
			covered[en.Type] = string(utf16.Decode(units[en.Offset : en.Offset+en.Length]))
		}
		if covered["pre"] != "$ "+body["command"].(string) || covered["blockquote"] != body["detail"] {
			t.Errorf("entities %+v cover %q; text %q", ents, covered, m.str("text"))
		}
	})
}
