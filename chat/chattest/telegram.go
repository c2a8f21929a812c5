package chattest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Telegram is an in-process stand-in for the Telegram Bot API at
// /bot<token>/<method>, answering the documented {"ok", "result"} shapes;
// each call is recorded with its multipart form fields, and a sendMessage
// with the message id it was answered ("_message_id").
type Telegram struct {
	*httptest.Server
	recorder
	token string
	chats map[string]bool
	msgID int
}

// NewTelegram starts a stand-in that takes the bot token and knows the
// chats; it stops at the test's cleanup.
func NewTelegram(t testing.TB, token string, chats ...string) *Telegram {
	b := &Telegram{recorder: newRecorder(), token: token, chats: map[string]bool{}, msgID: 100}
	for _, c := range chats {
		b.chats[c] = true
	}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func (b *Telegram) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/bot")
	token, method, _ := strings.Cut(path, "/")
	call := Call{Method: method, Args: map[string]any{}, At: time.Now()}
	if err := r.ParseMultipartForm(1 << 20); err == nil {
		for k, v := range r.MultipartForm.Value {
			call.Args[k] = v[0]
		}
	}
	status := b.take(method)
	id := 0
	if method == "sendMessage" && status == 0 {
		b.mu.Lock()
		b.msgID++
		id = b.msgID
		b.mu.Unlock()
		call.Args["_message_id"] = fmt.Sprint(id) // the id answered, for the test
	}
	b.ch(method) <- call
	w.Header().Set("Content-Type", "application/json")
	answer := func(result string) { fmt.Fprintf(w, `{"ok":true,"result":%s}`, result) }
	refuse := func(code int, desc string) {
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"ok":false,"error_code":%d,"description":%q}`, code, desc)
	}
	switch {
	case status == http.StatusTooManyRequests:
		w.WriteHeader(status)
		fmt.Fprint(w, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}`)
		return
	case status != 0:
		refuse(status, "Internal Server Error")
		return
	case token != b.token:
		refuse(401, "Unauthorized")
		return
	}
	chat := call.Str("chat_id")
	switch method {
	case "getMe":
		answer(`{"id":7000000001,"is_bot":true,"first_name":"Gatehouse","username":"gatehouse_test_bot","can_join_groups":true,"can_read_all_group_messages":false,"supports_inline_queries":false}`)
	case "getChat":
		if !b.chats[chat] {
			refuse(400, "Bad Request: chat not found")
			return
		}
		answer(fmt.Sprintf(`{"id":%s,"type":"group","title":"ops","accent_color_id":0,"max_reaction_count":11}`, chat))
	case "setWebhook":
		answer("true")
	case "sendMessage":
		text, _ := json.Marshal(call.Str("text"))
		answer(fmt.Sprintf(`{"message_id":%d,"from":{"id":7000000001,"is_bot":true,"first_name":"Gatehouse"},"chat":{"id":%s,"type":"group","title":"ops"},"date":1700000000,"text":%s}`, id, chat, text))
	case "editMessageText":
		text, _ := json.Marshal(call.Str("text"))
		answer(fmt.Sprintf(`{"message_id":%s,"chat":{"id":%s,"type":"group","title":"ops"},"date":1700000000,"edit_date":1700000100,"text":%s}`, call.Str("message_id"), chat, text))
	case "answerCallbackQuery":
		answer("true")
	default:
		refuse(404, "Not Found: method not found")
	}
}
