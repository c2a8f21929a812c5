package chat_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// lyingIDs are options whose ids read as the opposite of their effects. A
// filing with them is refused (misleading_option); a request stored before
// that check, or by a filer outside it, still reaches the chats.
var lyingIDs = []models.Option{{ID: "deny", Label: "Deny", Effect: "allow"}, {ID: "no", Label: "No", Effect: "deny"}}

// relabel gives a stored request other options, as a request filed before
// filings were checked for misleading options holds them.
func relabel(t *testing.T, e *botEnv, id string, opts []models.Option) {
	t.Helper()
	if err := e.Store.DB.Model(&models.Request{}).Where("id = ?", id).Select("options").Updates(&models.Request{Options: opts}).Error; err != nil {
		t.Fatal(err)
	}
}

// The agent files `git push --force origin main` with an allow whose id is
// "deny"; the operator replies "deny not on a Friday", docs/chat.md's own
// example of denying with a note. The reply selects by effect word or by
// number, never by reading a filer's id as a word.
func TestTelegramReplySelectsByEffectNotByID(t *testing.T) {
	e := newBotEnv(t, "sqlite", nil)
	e.bot.next(t, "setWebhook")
	op := e.link(t, "alice", 42)
	agent := e.Token(models.RoleAgent, "build-bot")
	env := &chatEnv{Env: e.Env}
	force := permission()
	force["title"], force["command"] = "Run git push --force origin main", "git push --force origin main"

	t.Run("the filing is refused as misleading", func(t *testing.T) {
		body := permission()
		body["options"] = lyingIDs
		status, b := e.Do("POST", "/v1/requests", agent, body)
		if got := webtest.JSON(t, b); status != http.StatusBadRequest || got["error"] != "misleading_option" || !strings.Contains(got["detail"].(string), "options[0]") {
			t.Fatalf("%d %s", status, b)
		}
	})
	t.Run("deny with a note denies, whatever the ids say", func(t *testing.T) {
		id, _ := env.file(t, agent, force)
		ref := e.bot.next(t, "sendMessage").str("_message_id")
		relabel(t, e, id, lyingIDs)
		e.say(t, 42, "deny not on a Friday", ref)
		if got := e.bot.next(t, "sendMessage"); !strings.Contains(got.str("text"), "denied by operator:alice via telegram") {
			t.Errorf("reply answer: %s", got.str("text"))
		}
		r := e.get(t, op, id)
		if r["decision"] != "no" || r["note"] != "not on a Friday" {
			t.Fatalf("decision %v note %v, want the deny-effect option", r["decision"], r["note"])
		}
		e.bot.next(t, "editMessageText")
	})
	t.Run("a number selects the option shown at that place", func(t *testing.T) {
		id, _ := env.file(t, agent, force)
		ref := e.bot.next(t, "sendMessage").str("_message_id")
		e.say(t, 42, "2 not on a Friday", ref)
		e.bot.next(t, "sendMessage")
		if r := e.get(t, op, id); r["decision"] != "deny" || r["note"] != "not on a Friday" {
			t.Fatalf("decision %v note %v", r["decision"], r["note"])
		}
		e.bot.next(t, "editMessageText")
	})
	t.Run("on a question that takes an answer, a reply that selects no option is the answer", func(t *testing.T) {
		q := map[string]any{"kind": "question", "title": "How many replicas?", "allow_answer": true,
			"options": []map[string]any{{"id": "two", "label": "Two"}, {"id": "four", "label": "Four"}}}
		id, _ := env.file(t, agent, q)
		ref := e.bot.next(t, "sendMessage").str("_message_id")
		e.say(t, 42, "3 replicas, one per zone", ref)
		e.bot.next(t, "sendMessage")
		if r := e.get(t, op, id); r["answer"] != "3 replicas, one per zone" || r["decision"] != nil {
			t.Fatalf("answer %v decision %v", r["answer"], r["decision"])
		}
		e.bot.next(t, "editMessageText")
		id, _ = env.file(t, agent, q)
		ref = e.bot.next(t, "sendMessage").str("_message_id")
		e.say(t, 42, "2 for now", ref)
		e.bot.next(t, "sendMessage")
		if r := e.get(t, op, id); r["decision"] != "four" || r["note"] != "for now" {
			t.Fatalf("decision %v note %v", r["decision"], r["note"])
		}
		e.bot.next(t, "editMessageText")
	})
	t.Run("an option's id is not a word: refused with numbers and effects", func(t *testing.T) {
		id, _ := env.file(t, agent, force)
		ref := e.bot.next(t, "sendMessage").str("_message_id")
		e.say(t, 42, "once fine by me", ref)
		got := e.bot.next(t, "sendMessage").str("text")
		if !strings.HasPrefix(got, "Not done") || !strings.Contains(got, `1 = allow ("Allow once"), 2 = deny ("Deny")`) {
			t.Errorf("reply answer: %s", got)
		}
		if r := e.get(t, op, id); r["status"] != "open" {
			t.Fatalf("status %v", r["status"])
		}
	})
}

// telegramUpdate is a message update as the Bot API sends one from a sender
// that is not one person: from, and the sender_chat and
// is_automatic_forward members Telegram adds.
func telegramUpdate(n int, from, extra, text, replyTo string) string {
	reply := ""
	if replyTo != "" {
		reply = fmt.Sprintf(`, "reply_to_message": {"message_id": %s, "from": {"id": 7000000001, "is_bot": true, "first_name": "Gatehouse"}, "chat": {"id": -1001234567890, "type": "supergroup", "title": "ops"}, "date": 1700000000, "text": "…"}`, replyTo)
	}
	return fmt.Sprintf(`{"update_id": %d, "message": {"message_id": 6001, "from": %s%s, "chat": {"id": -1001234567890, "title": "ops", "type": "supergroup"}, "date": 1700000300, "text": %q%s}}`,
		n, from, extra, text, reply)
}

// Anonymous group admins, channel posts, automatic forwards and bots are
// each many people (or none) behind one Telegram id: they never link, and
// an id linked before this was refused never decides.
func TestTelegramSharedIdentitiesNeverLinkOrDecide(t *testing.T) {
	e := newBotEnv(t, "sqlite", nil)
	e.bot.next(t, "setWebhook")
	op := e.link(t, "alice", 42)
	agent := e.Token(models.RoleAgent, "build-bot")
	env := &chatEnv{Env: e.Env}
	group := `, "sender_chat": {"id": -1001234567890, "title": "ops", "type": "supergroup"}`
	channel := `, "sender_chat": {"id": -1009876543210, "title": "releases", "type": "channel"}`
	for i, c := range []struct{ name, id, from, extra string }{
		{"an anonymous group admin", "1087968824", `{"id": 1087968824, "is_bot": true, "first_name": "Group", "username": "GroupAnonymousBot"}`, group},
		{"a channel's post", "136817688", `{"id": 136817688, "is_bot": true, "first_name": "Channel", "username": "Channel_Bot"}`, channel},
		{"an automatic forward", "777000", `{"id": 777000, "is_bot": false, "first_name": "Telegram"}`, channel + `, "is_automatic_forward": true`},
		{"a bot", "5550001", `{"id": 5550001, "is_bot": true, "first_name": "Helper", "username": "helper_bot"}`, ""},
		{"a person posting as the group", "43", `{"id": 43, "is_bot": false, "first_name": "Bob"}`, group},
	} {
		t.Run(c.name, func(t *testing.T) {
			send := func(n int, text, replyTo string) {
				t.Helper()
				if replyTo != "" {
					e.awaitRecorded(t, replyTo)
				}
				h := http.Header{"Content-Type": {"application/json"}, "X-Telegram-Bot-Api-Secret-Token": {botSecret}}
				if status, _ := env.post(t, "/chat/telegram/webhook", telegramUpdate(950000+i*10+n, c.from, c.extra, text, replyTo), h); status != 200 {
					t.Fatalf("update: %d", status)
				}
			}
			status, b := e.Do("POST", "/v1/chat/link-codes", op, nil)
			if status != 201 {
				t.Fatalf("%d %s", status, b)
			}
			code := webtest.JSON(t, b)["code"].(string)
			send(1, "/link "+code, "")
			if got := e.bot.next(t, "sendMessage").str("text"); !strings.HasPrefix(got, "Not done") {
				t.Errorf("link answer: %s", got)
			}
			ctx := context.Background()
			if p, err := e.Store.ChatOperator(ctx, "telegram", "", c.id); err == nil {
				t.Fatalf("linked as %s", p.Label())
			}
			// Linked anyway, as a link made before the refusal was.
			if _, err := e.Store.RedeemChatLinkCode(ctx, code, "telegram", "", c.id); err != nil {
				t.Fatal(err)
			}
			id, v := env.file(t, agent, permission())
			ref := e.bot.next(t, "sendMessage").str("_message_id")
			send(2, "deny not on a Friday", ref)
			if got := e.bot.next(t, "sendMessage").str("text"); !strings.HasPrefix(got, "Not done") {
				t.Errorf("reply answer: %s", got)
			}
			if c.id != "43" { // a press from the shared (or bot) id itself
				press := fmt.Sprintf(`{"update_id": %d, "callback_query": {"id": "4382bfdwdsb323b2e%d", "from": %s, "chat_instance": "-3120429118386426541", "data": "%s|%d|0",
					"message": {"message_id": %s, "from": {"id": 7000000001, "is_bot": true, "first_name": "Gatehouse"}, "chat": {"id": -1001234567890, "title": "ops", "type": "supergroup"}, "date": 1700000000, "text": "…"}}}`,
					950000+i*10+3, i, c.from, id, v, ref)
				h := http.Header{"Content-Type": {"application/json"}, "X-Telegram-Bot-Api-Secret-Token": {botSecret}}
				env.post(t, "/chat/telegram/webhook", press, h)
				if got := e.bot.next(t, "answerCallbackQuery").str("text"); !strings.HasPrefix(got, "Not done") {
					t.Errorf("press answer: %s", got)
				}
			}
			if r := e.get(t, op, id); r["status"] != "open" {
				t.Fatalf("decided by %v", r["decided_by"])
			}
		})
	}
}

// The same Slack callback with its signature's hex in capitals is the same
// callback: acted on once.
func TestSlackCallbackActsOnceWhateverTheHexCase(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	e.operator(t, "alice", "U0ALICE")
	id, v := e.file(t, agent, permission())
	e.slack.next(t, "chat.postMessage")
	body := clickBody(t, "U0ALICE", "gatehouse_decide:once", fmt.Sprintf("%s|%d|once", id, v))
	h := signed(body, time.Now(), slackSecret)
	upper := h.Clone()
	upper.Set("X-Slack-Signature", "v0="+strings.ToUpper(strings.TrimPrefix(h.Get("X-Slack-Signature"), "v0=")))
	for _, h := range []http.Header{h, upper} {
		if status, b := e.post(t, "/chat/slack/interactions", body, h); status != 200 {
			t.Fatalf("%d %s", status, b)
		}
	}
	e.slack.next(t, "chat.postEphemeral")
	if n := e.slack.count("chat.postEphemeral"); n != 1 {
		t.Fatalf("acted on %d times", n)
	}
}

// A full message's top-level text (the notification's) is read by Slack as
// mrkdwn: the filer's title in it cannot bold, strike, italicise or code.
func TestSlackFallbackTextIsLiteral(t *testing.T) {
	e := newChatEnv(t, "sqlite")
	agent := e.Token(models.RoleAgent, "build-bot")
	body := permission()
	body["title"] = "*Approved* ~by rule~ _now_ `ok` <!channel>"
	e.file(t, agent, body)
	text := e.slack.next(t, "chat.postMessage").str("text")
	if strings.ContainsAny(text, "*~_`<>") || !strings.Contains(text, "Approved") {
		t.Fatalf("fallback text %q", text)
	}
}
