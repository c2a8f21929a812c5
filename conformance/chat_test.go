package conformance_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/chat/chattest"
	"github.com/gatehousehq/gatehouse/internal/testkit"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

const (
	slackToken  = "xoxb-conformance"
	slackSecret = "conformance-signing-secret-0123"
	botToken    = "7000000001:AAconformance"
	botSecret   = "conformance-webhook-secret"
	opsChat     = "-1001234567890"
)

// Every request goes to one destination, in full, so its message carries a
// button per option.
const slackFile = `slack:
  token_env: GH_CONFORMANCE_SLACK_TOKEN
  signing_secret_env: GH_CONFORMANCE_SLACK_SECRET
  api_url: %s
destinations:
  - name: ops
    slack: C0OPS
    detail: full
routes:
  - to: [ops]
`

const telegramFile = `telegram:
  token_env: GH_CONFORMANCE_TG_TOKEN
  secret_token_env: GH_CONFORMANCE_TG_SECRET
  api_url: %s
destinations:
  - name: ops
    telegram: "` + opsChat + `"
    detail: full
routes:
  - to: [ops]
`

// fixture reads a payload recorded from the chat service (the chat
// package's testdata) and fills its placeholders.
func fixture(t testing.TB, name string, fill map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "chat", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	for k, v := range fill {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

var serial atomic.Int64 // trigger ids and update ids, unique per callback

// postRaw sends a callback with exactly these headers and body.
func postRaw(t testing.TB, g *gatehouse, path, body string, h http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	res, err := g.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// linkCode is a one-time link code an operator makes.
func linkCode(t testing.TB, g *gatehouse, who string) string {
	t.Helper()
	status, body := g.Do(http.MethodPost, "/v1/chat/link-codes", g.ops[who], nil)
	if status != http.StatusCreated {
		t.Fatalf("link code: %d %s", status, body)
	}
	return webtest.JSON(t, body)["code"].(string)
}

// chatAnswer reads a chat reply to an act: "Not done: …" is a refusal.
func chatAnswer(text string) answer {
	if strings.HasPrefix(text, "Not done") {
		return answer{refused: true, code: codeOfWords(text), said: text}
	}
	return answer{said: text}
}

// slackSurface is a Slack channel: a message per request with a button per
// option; a click is a signed block_actions callback, answered privately.
type slackSurface struct {
	g     *gatehouse
	api   *chattest.Slack
	users map[string]string // operator -> Slack user; the stranger is linked to no one
	last  struct {
		body string
		h    http.Header
	}
}

func startSlack(t *testing.T, dialect string) surface {
	t.Helper()
	t.Setenv("GH_CONFORMANCE_SLACK_TOKEN", slackToken)
	t.Setenv("GH_CONFORMANCE_SLACK_SECRET", slackSecret)
	api := chattest.NewSlack(t, slackToken, "C0OPS")
	s := &slackSurface{g: newGatehouse(t, dialect, fmt.Sprintf(slackFile, api.APIURL()), nil), api: api,
		users: map[string]string{approver: "U0ALICE", outsider: "U0CAROL", stranger: "U0STRANGER"}}
	for _, who := range []string{approver, outsider} {
		body := fixture(t, "slack/slash_command.txt", map[string]string{"USER": s.users[who], "CODE": linkCode(t, s.g, who), "TRIGGER": fmt.Sprint(serial.Add(1))})
		if status := postRaw(t, s.g, "/chat/slack/commands", body, chattest.SignSlack(body, time.Now(), slackSecret)); status != http.StatusOK {
			t.Fatalf("link %s: %d", who, status)
		}
	}
	return s
}

func (s *slackSurface) gatehouse() *gatehouse { return s.g }

type slackButton struct{ action, value, text string }

// file files through the API and waits for the channel's message.
func (s *slackSurface) file(t *testing.T, f filing) (*shown, string) {
	t.Helper()
	rec, code := s.g.fileREST(t, f)
	if code != "" {
		return nil, code
	}
	id := rec["id"].(string)
	post := s.api.Next(t, "chat.postMessage")
	var buttons []slackButton
	for _, b := range post.Blocks(t) {
		if b["type"] != "actions" {
			continue
		}
		for _, el := range b["elements"].([]any) {
			m := el.(map[string]any)
			text, _ := m["text"].(map[string]any)["text"].(string)
			value, _ := m["value"].(string)
			buttons = append(buttons, slackButton{action: m["action_id"].(string), value: value, text: text})
		}
	}
	if len(buttons) == 0 || !strings.HasPrefix(buttons[0].value, id+"|") {
		t.Fatalf("the message for %s has no buttons of its own: %+v", id, buttons)
	}
	return &shown{id: id, data: buttons}, ""
}

func (s *slackSurface) edit(t *testing.T, sh *shown) { s.g.editREST(t, sh.id) }

// decide clicks the button whose text shows the pick.
func (s *slackSurface) decide(t *testing.T, sh *shown, a act) answer {
	t.Helper()
	var btn *slackButton
	for _, b := range sh.data.([]slackButton) {
		if strings.HasPrefix(b.action, "gatehouse_decide:") && shows(b.text, a.pick) {
			btn = &b
			break
		}
	}
	if btn == nil {
		t.Fatalf("no button shows %s: %+v", a.pick, sh.data)
	}
	payload := fixture(t, "slack/block_actions.json", map[string]string{"USER": s.users[a.who], "ACTION": btn.action, "VALUE": btn.value,
		"TS": "1700000000.000001", "TRIGGER": fmt.Sprint(serial.Add(1))})
	s.last.body = "payload=" + url.QueryEscape(payload)
	s.last.h = chattest.SignSlack(s.last.body, time.Now(), slackSecret)
	return s.send(t)
}

func (s *slackSurface) replay(t *testing.T, sh *shown) answer { return s.send(t) }

// send posts the last click; a click acted on is answered privately before
// the callback is, so no answer by then means it was not acted on.
func (s *slackSurface) send(t *testing.T) answer {
	t.Helper()
	n := s.api.Count("chat.postEphemeral")
	if status := postRaw(t, s.g, "/chat/slack/interactions", s.last.body, s.last.h); status != http.StatusOK {
		return answer{refused: true, code: fmt.Sprint(status), said: "callback refused"}
	}
	if s.api.Count("chat.postEphemeral") == n {
		return answer{refused: true, code: ignored, said: "acknowledged, not acted on"}
	}
	return chatAnswer(s.api.Next(t, "chat.postEphemeral").Str("text"))
}

// telegramSurface is a Telegram group: a message per request with an
// inline keyboard; an operator presses a button (callback_query) or replies
// to the message with the effect word.
type telegramSurface struct {
	g        *gatehouse
	bot      *chattest.Telegram
	mode     string // button or reply
	users    map[string]int
	recorded chan string // message ids the outbox recorded
	seen     map[string]bool
	last     struct {
		body   string
		answer string // the Bot API method the act is answered with
	}
}

func startTelegram(mode string) func(t *testing.T, dialect string) surface {
	return func(t *testing.T, dialect string) surface {
		t.Helper()
		t.Setenv("GH_CONFORMANCE_TG_TOKEN", botToken)
		t.Setenv("GH_CONFORMANCE_TG_SECRET", botSecret)
		bot := chattest.NewTelegram(t, botToken, opsChat)
		recorded := make(chan string, 1000)
		sent := func(_ store.ChatMessage, out store.ChatSend) {
			if out.Sent {
				recorded <- out.Ref
			}
		}
		s := &telegramSurface{g: newGatehouse(t, dialect, fmt.Sprintf(telegramFile, bot.URL), sent), bot: bot, mode: mode,
			users: map[string]int{approver: 1001, outsider: 1003, stranger: 1009}, recorded: recorded, seen: map[string]bool{}}
		for _, who := range []string{approver, outsider} {
			s.update(t, s.message(t, s.users[who], "/link "+linkCode(t, s.g, who), ""))
			if got := s.bot.Next(t, "sendMessage").Str("text"); !strings.Contains(got, "Linked") {
				t.Fatalf("link %s: %s", who, got)
			}
		}
		return s
	}
}

func (s *telegramSurface) gatehouse() *gatehouse { return s.g }

type telegramPost struct {
	message string
	buttons []struct {
		Text         string `json:"text"`
		CallbackData string `json:"callback_data"`
	}
}

// file files through the API and waits for the message, recorded, so a
// reply to it finds it.
func (s *telegramSurface) file(t *testing.T, f filing) (*shown, string) {
	t.Helper()
	rec, code := s.g.fileREST(t, f)
	if code != "" {
		return nil, code
	}
	id := rec["id"].(string)
	post := s.bot.Next(t, "sendMessage")
	var kb struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(post.Str("reply_markup")), &kb); err != nil {
		t.Fatalf("the message for %s has no keyboard: %v %v", id, err, post.Args)
	}
	p := telegramPost{message: post.Str("_message_id")}
	for _, row := range kb.InlineKeyboard {
		p.buttons = append(p.buttons, row...)
	}
	if len(p.buttons) == 0 || !strings.HasPrefix(p.buttons[0].CallbackData, id+"|") {
		t.Fatalf("the message for %s has no buttons of its own: %+v", id, p.buttons)
	}
	for !s.seen[p.message] {
		s.seen[testkit.Recv(t, s.recorded, "the post of message "+p.message+" recorded")] = true
	}
	return &shown{id: id, data: p}, ""
}

func (s *telegramSurface) edit(t *testing.T, sh *shown) { s.g.editREST(t, sh.id) }

// decide presses the button whose text shows the pick, or replies to the
// message with the pick's effect word.
func (s *telegramSurface) decide(t *testing.T, sh *shown, a act) answer {
	t.Helper()
	p := sh.data.(telegramPost)
	if s.mode == "reply" {
		s.last.body, s.last.answer = s.message(t, s.users[a.who], a.pick, p.message), "sendMessage"
		return s.send(t)
	}
	data := ""
	for _, b := range p.buttons {
		if shows(b.Text, a.pick) {
			data = b.CallbackData
			break
		}
	}
	if data == "" {
		t.Fatalf("no button shows %s: %+v", a.pick, p.buttons)
	}
	s.last.body = fixture(t, "telegram/callback_query.json", map[string]string{"UPDATE": fmt.Sprint(800000 + serial.Add(1)),
		"USER": fmt.Sprint(s.users[a.who]), "MESSAGE": p.message, "DATA": data})
	s.last.answer = "answerCallbackQuery"
	return s.send(t)
}

func (s *telegramSurface) replay(t *testing.T, sh *shown) answer { return s.send(t) }

// send posts the last update; one acted on is answered before the webhook
// returns, so no answer by then means it was not acted on.
func (s *telegramSurface) send(t *testing.T) answer {
	t.Helper()
	n := s.bot.Count(s.last.answer)
	if status := s.update(t, s.last.body); status != http.StatusOK {
		return answer{refused: true, code: fmt.Sprint(status), said: "update refused"}
	}
	if s.bot.Count(s.last.answer) == n {
		return answer{refused: true, code: ignored, said: "acknowledged, not acted on"}
	}
	return chatAnswer(s.bot.Next(t, s.last.answer).Str("text"))
}

// message is an update carrying a message from user, a reply to the
// message with id replyTo when given.
func (s *telegramSurface) message(t testing.TB, user int, text, replyTo string) string {
	q, _ := json.Marshal(text)
	reply := ""
	if replyTo != "" {
		reply = fmt.Sprintf(`, "reply_to_message": {"message_id": %s, "from": {"id": 7000000001, "is_bot": true, "first_name": "Gatehouse"}, "chat": {"id": %s, "type": "supergroup", "title": "ops"}, "date": 1700000000, "text": "…"}`, replyTo, opsChat)
	}
	return fixture(t, "telegram/message.json", map[string]string{"UPDATE": fmt.Sprint(800000 + serial.Add(1)), "USER": fmt.Sprint(user), "TEXT": string(q), "REPLY": reply})
}

func (s *telegramSurface) update(t testing.TB, body string) int {
	t.Helper()
	return postRaw(t, s.g, "/chat/telegram/webhook", body, http.Header{"Content-Type": {"application/json"}, "X-Telegram-Bot-Api-Secret-Token": {botSecret}})
}
