package chat_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// botStandIn is an in-process stand-in for the Telegram Bot API at
// /bot<token>/<method>, answering the documented {"ok", "result"} shapes;
// each call is recorded with its multipart form fields.
type botStandIn struct {
	*httptest.Server
	token string
	chats map[string]bool

	mu     sync.Mutex
	calls  map[string]chan slackCall
	counts map[string]int
	msgID  int
	script map[string][]int
}

func newBotStandIn(t testing.TB, token string, chats ...string) *botStandIn {
	b := &botStandIn{token: token, chats: map[string]bool{}, calls: map[string]chan slackCall{}, counts: map[string]int{}, script: map[string][]int{}, msgID: 100}
	for _, c := range chats {
		b.chats[c] = true
	}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func (b *botStandIn) ch(method string) chan slackCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.calls[method]
	if !ok {
		c = make(chan slackCall, 100)
		b.calls[method] = c
	}
	return c
}

func (b *botStandIn) next(t testing.TB, method string) slackCall {
	t.Helper()
	select {
	case c := <-b.ch(method):
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s call within 10s", method)
		return slackCall{}
	}
}

func (b *botStandIn) count(method string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[method]
}

func (b *botStandIn) fail(method string, statuses ...int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.script[method] = append(b.script[method], statuses...)
}

func (b *botStandIn) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/bot")
	token, method, _ := strings.Cut(path, "/")
	call := slackCall{Method: method, Args: map[string]any{}, At: time.Now()}
	if err := r.ParseMultipartForm(1 << 20); err == nil {
		for k, v := range r.MultipartForm.Value {
			call.Args[k] = v[0]
		}
	}
	b.mu.Lock()
	b.counts[method]++
	status := 0
	if q := b.script[method]; len(q) > 0 {
		status, b.script[method] = q[0], q[1:]
	}
	id := 0
	if method == "sendMessage" && status == 0 {
		b.msgID++
		id = b.msgID
		call.Args["_message_id"] = fmt.Sprint(id) // the id answered, for the test
	}
	b.mu.Unlock()
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
	chat := call.str("chat_id")
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
		text, _ := json.Marshal(call.str("text"))
		answer(fmt.Sprintf(`{"message_id":%d,"from":{"id":7000000001,"is_bot":true,"first_name":"Gatehouse"},"chat":{"id":%s,"type":"group","title":"ops"},"date":1700000000,"text":%s}`, id, chat, text))
	case "editMessageText":
		text, _ := json.Marshal(call.str("text"))
		answer(fmt.Sprintf(`{"message_id":%s,"chat":{"id":%s,"type":"group","title":"ops"},"date":1700000000,"edit_date":1700000100,"text":%s}`, call.str("message_id"), chat, text))
	case "answerCallbackQuery":
		answer("true")
	default:
		refuse(404, "Not Found: method not found")
	}
}
