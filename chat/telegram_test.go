package chat_test

import (
	"encoding/json"
	"fmt"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

const (
	botToken  = "7000000001:AAtest-token"
	botSecret = "webhook-secret-0123456789"
	opsChat   = "-1001234567890"
)

const telegramFile = `telegram:
  token_env: GH_TEST_TG_TOKEN
  secret_token_env: GH_TEST_TG_SECRET
  api_url: %s
destinations:
  - name: ops
    telegram: "-1001234567890"
    detail: full
routes:
  - to: [ops]
`

type botEnv struct {
	*webtest.Env
	bot *botStandIn
	// recorded hands over the message id of each send the outbox has
	// recorded; seen keeps those already taken.
	recorded chan string
	seen     map[string]bool
}

func newBotEnv(t *testing.T, dialect string, bot *botStandIn) *botEnv {
	t.Helper()
	if bot == nil {
		bot = newBotStandIn(t, botToken, opsChat)
	}
	t.Setenv("GH_TEST_TG_TOKEN", botToken)
	t.Setenv("GH_TEST_TG_SECRET", botSecret)
	st, changes := storetest.Store(t, dialect)
	recorded := make(chan string, 1000)
	env := webtest.NewApp(t, app.Config{Store: st, Changes: changes, ChatFile: writeFile(t, fmt.Sprintf(telegramFile, bot.URL)),
		ChatSent: func(_ store.ChatMessage, out store.ChatSend) {
			if out.Sent {
				recorded <- out.Ref
			}
		}})
	return &botEnv{Env: env, bot: bot, recorded: recorded, seen: map[string]bool{}}
}

var updates atomic.Int64

// update sends one webhook update from the Bot API's recorded shape.
func (e *botEnv) update(t testing.TB, name string, fill map[string]string, secret string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "telegram", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if fill["UPDATE"] == "" {
		fill["UPDATE"] = fmt.Sprint(900000 + updates.Add(1))
	}
	for k, v := range fill {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if secret != "" {
		h.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	status, _ := (&chatEnv{Env: e.Env}).post(t, "/chat/telegram/webhook", s, h)
	return status
}

func (e *botEnv) press(t testing.TB, user int, message, data string) int {
	return e.update(t, "callback_query.json", map[string]string{"USER": fmt.Sprint(user), "MESSAGE": message, "DATA": data}, botSecret)
}

// awaitRecorded returns once the outbox has recorded the post of message
// ref. A reply names the message by its id, which the outbox records just
// after the Bot API answers the post: a reply sent before that is to a
// message Gatehouse does not know yet.
func (e *botEnv) awaitRecorded(t testing.TB, ref string) {
	t.Helper()
	for !e.seen[ref] {
		e.seen[testkit.Recv(t, e.recorded, "the post of message "+ref+" recorded")] = true
	}
}

func (e *botEnv) say(t testing.TB, user int, text, replyTo string) int {
	t.Helper()
	q, _ := json.Marshal(text)
	reply := ""
	if replyTo != "" {
		e.awaitRecorded(t, replyTo)
		reply = fmt.Sprintf(`, "reply_to_message": {"message_id": %s, "from": {"id": 7000000001, "is_bot": true, "first_name": "Gatehouse"}, "chat": {"id": -1001234567890, "type": "supergroup", "title": "ops"}, "date": 1700000000, "text": "…"}`, replyTo)
	}
	return e.update(t, "message.json", map[string]string{"USER": fmt.Sprint(user), "TEXT": string(q), "REPLY": reply}, botSecret)
}

// link links Telegram user to a new operator as a person would.
func (e *botEnv) link(t *testing.T, name string, user int) string {
	t.Helper()
	tok := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: name})
	status, body := e.Do("POST", "/v1/chat/link-codes", tok, nil)
	if status != 201 {
		t.Fatalf("%d %s", status, body)
	}
	e.say(t, user, "/link "+webtest.JSON(t, body)["code"].(string), "")
	if got := e.bot.next(t, "sendMessage"); !strings.Contains(got.str("text"), "Linked") {
		t.Fatalf("link answer: %s", got.str("text"))
	}
	return tok
}

func (e *botEnv) get(t testing.TB, op, id string) map[string]any {
	return (&chatEnv{Env: e.Env}).get(t, op, id)
}

func keyboard(t testing.TB, c slackCall) [][]map[string]string {
	t.Helper()
	if c.str("reply_markup") == "" {
		return nil
	}
	var kb struct {
		InlineKeyboard [][]map[string]string `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(c.str("reply_markup")), &kb); err != nil {
		t.Fatalf("reply_markup %q: %v", c.str("reply_markup"), err)
	}
	return kb.InlineKeyboard
}

func TestTelegramPressDecides(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := newBotEnv(t, dialect, nil)
		if hook := e.bot.next(t, "setWebhook"); hook.str("secret_token") != botSecret || !strings.HasSuffix(hook.str("url"), "/chat/telegram/webhook") {
			t.Errorf("setWebhook %v", hook.Args)
		}
		op := e.link(t, "alice", 42)
		agent := e.Token(models.RoleAgent, "build-bot")
		id, v := (&chatEnv{Env: e.Env}).file(t, agent, permission())
		posted := e.bot.next(t, "sendMessage")
		text := posted.str("text")
		for _, want := range []string{"Run git push origin main", "filed by agent:build-bot", "session 01234567", "cwd /home/dev/repo", "$ git push origin main", "Expires "} {
			if !strings.Contains(text, want) {
				t.Errorf("message lacks %q:\n%s", want, text)
			}
		}
		kb := keyboard(t, posted)
		if len(kb) != 2 || kb[0][0]["text"] != "1. Allow once — lets this command run once" || kb[0][0]["callback_data"] != fmt.Sprintf("%s|%d|0", id, v) ||
			kb[1][0]["text"] != "2. Deny — blocks this command" {
			t.Errorf("keyboard %v", kb)
		}
		if posted.str("parse_mode") != "" {
			t.Errorf("parse_mode %q: a filer's text would be read as markup", posted.str("parse_mode"))
		}

		msg := posted.str("_message_id")
		if status := e.press(t, 42, msg, fmt.Sprintf("%s|%d|0", id, v)); status != 200 {
			t.Fatalf("press: %d", status)
		}
		if ans := e.bot.next(t, "answerCallbackQuery"); !strings.Contains(ans.str("text"), "Done: Allow once") || ans.str("show_alert") != "true" {
			t.Errorf("answer %v", ans.Args)
		}
		r := e.get(t, op, id)
		if r["status"] != "resolved" || r["decision"] != "once" || r["decided_by"] != "operator:alice" || r["decided_via"] != "telegram" {
			t.Fatalf("%v %v %v %v", r["status"], r["decision"], r["decided_by"], r["decided_via"])
		}
		up := e.bot.next(t, "editMessageText")
		if up.str("message_id") != msg || up.str("chat_id") != opsChat || keyboard(t, up) != nil ||
			!strings.Contains(up.str("text"), "Allow once — approved by operator:alice via telegram at ") {
			t.Errorf("edit %v", up.Args)
		}
		recordTelegram(t, "send_full.json", posted, id)
		recordTelegram(t, "edit_decided.json", up, id)

		t.Run("a stale press is refused", func(t *testing.T) {
			e.press(t, 42, msg, fmt.Sprintf("%s|%d|1", id, v))
			if ans := e.bot.next(t, "answerCallbackQuery"); !strings.Contains(ans.str("text"), "decided elsewhere") {
				t.Errorf("answer %s", ans.str("text"))
			}
			if r := e.get(t, op, id); r["decision"] != "once" {
				t.Errorf("decision %v", r["decision"])
			}
		})
	})
}

func TestTelegramRepliesAndRefusals(t *testing.T) {
	e := newBotEnv(t, "sqlite", nil)
	e.bot.next(t, "setWebhook")
	op := e.link(t, "alice", 42)
	agent := e.Token(models.RoleAgent, "build-bot")
	env := &chatEnv{Env: e.Env}

	t.Run("a reply with an option and a note decides with the note", func(t *testing.T) {
		id, _ := env.file(t, agent, permission())
		ref := e.bot.next(t, "sendMessage").str("_message_id")
		e.say(t, 42, "deny not on a Friday", ref)
		if got := e.bot.next(t, "sendMessage"); !strings.Contains(got.str("text"), "Done: Deny") {
			t.Errorf("reply answer: %s", got.str("text"))
		}
		if r := e.get(t, op, id); r["decision"] != "deny" || r["note"] != "not on a Friday" {
			t.Errorf("%v %v", r["decision"], r["note"])
		}
		e.bot.next(t, "editMessageText")
	})
	t.Run("a reply to a question is its answer", func(t *testing.T) {
		id, _ := env.file(t, agent, map[string]any{"kind": "question", "title": "Which database?", "options": []any{}, "allow_answer": true})
		ref := e.bot.next(t, "sendMessage").str("_message_id")
		e.say(t, 42, "PostgreSQL 17", ref)
		e.bot.next(t, "sendMessage")
		if r := e.get(t, op, id); r["answer"] != "PostgreSQL 17" {
			t.Errorf("answer %v", r["answer"])
		}
		e.bot.next(t, "editMessageText")
	})
	id, v := env.file(t, agent, permission())
	e.bot.next(t, "sendMessage")
	data := fmt.Sprintf("%s|%d|0", id, v)
	t.Run("an unlinked user changes nothing", func(t *testing.T) {
		e.press(t, 666, "200", data)
		if ans := e.bot.next(t, "answerCallbackQuery"); !strings.Contains(ans.str("text"), "not linked") {
			t.Errorf("answer %s", ans.str("text"))
		}
	})
	t.Run("a forged update is refused", func(t *testing.T) {
		for _, secret := range []string{"", "webhook-secret-0123456780", agent} {
			if status := e.update(t, "callback_query.json", map[string]string{"USER": "42", "MESSAGE": "200", "DATA": data}, secret); status != 401 {
				t.Errorf("secret %q: %d, want 401", secret, status)
			}
		}
	})
	t.Run("a retried update acts once", func(t *testing.T) {
		fill := func() map[string]string {
			return map[string]string{"UPDATE": "777", "USER": "42", "MESSAGE": "200", "DATA": data}
		}
		e.update(t, "callback_query.json", fill(), botSecret)
		e.update(t, "callback_query.json", fill(), botSecret)
		e.bot.next(t, "answerCallbackQuery")
		if n := e.bot.count("answerCallbackQuery"); n != 2 { // the unlinked press, and this one once
			t.Errorf("%d answers, want 2", n)
		}
		if r := e.get(t, op, id); r["status"] != "resolved" {
			t.Errorf("status %v", r["status"])
		}
	})
}

func TestTelegramPageDecisionEditsMessage(t *testing.T) {
	e := newBotEnv(t, "sqlite", nil)
	carol := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: "carol"})
	agent := e.Token(models.RoleAgent, "build-bot")
	id, v := (&chatEnv{Env: e.Env}).file(t, agent, permission())
	posted := e.bot.next(t, "sendMessage")
	if status, body := e.Do("POST", "/v1/requests/"+id+"/decide", carol, map[string]any{"version": v, "decision": "deny"}); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	up := e.bot.next(t, "editMessageText")
	if up.str("message_id") != posted.str("_message_id") || keyboard(t, up) != nil || !strings.Contains(up.str("text"), "Deny — denied by operator:carol via api") {
		t.Errorf("edit %v", up.Args)
	}
}

func TestTelegramRetriesAfter429(t *testing.T) {
	bot := newBotStandIn(t, botToken, opsChat)
	bot.fail("sendMessage", 429, 502)
	e := newBotEnv(t, "sqlite", bot)
	agent := e.Token(models.RoleAgent, "build-bot")
	(&chatEnv{Env: e.Env}).file(t, agent, permission())
	first := bot.next(t, "sendMessage")
	second := bot.next(t, "sendMessage")
	if gap := second.At.Sub(first.At); gap < 1e9 {
		t.Errorf("retried %s after a 429 with retry_after 1", gap)
	}
	bot.next(t, "sendMessage") // after the 502, with backoff
	if n := bot.count("sendMessage"); n != 3 {
		t.Errorf("%d sends", n)
	}
}

func TestTelegramConfigRefused(t *testing.T) {
	bot := newBotStandIn(t, botToken, opsChat)
	good := fmt.Sprintf(telegramFile, bot.URL)
	for _, tc := range []struct{ name, file, token, secret, want string }{
		{"token rejected", good, "7000000001:revoked", botSecret, "telegram.token_env (GH_TEST_TG_TOKEN): Telegram refused the token"},
		{"Telegram unreachable", fmt.Sprintf(telegramFile, deadURL(t)), botToken, botSecret, "cannot reach Telegram (check this host's DNS, network and proxy)"},
		{"unknown chat", strings.Replace(good, opsChat, "-1009", 1), botToken, botSecret, "destinations[0].telegram: chat -1009"},
		{"short secret", good, botToken, "short", "telegram.secret_token_env: environment variable GH_TEST_TG_SECRET must hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GH_TEST_TG_TOKEN", tc.token)
			t.Setenv("GH_TEST_TG_SECRET", tc.secret)
			st, changes := storetest.Store(t, "sqlite")
			a, err := app.New(app.Config{Store: st, Changes: changes, Addr: "127.0.0.1:0", ChatFile: writeFile(t, tc.file)})
			if err == nil {
				a.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// recordTelegram writes (or, without -update, compares) a Bot API call's
// fields as docs/chat.md shows them.
func recordTelegram(t *testing.T, name string, c slackCall, id string) {
	t.Helper()
	rec := map[string]any{"method": c.Method}
	for k, v := range c.Args {
		if !strings.HasPrefix(k, "_") {
			rec[k] = v
		}
	}
	if kb := keyboard(t, c); kb != nil {
		rec["reply_markup"] = map[string]any{"inline_keyboard": kb}
	}
	goldenJSON(t, filepath.Join("telegram", name), rec)
}
