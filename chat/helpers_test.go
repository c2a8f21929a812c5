package chat_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/chat/chattest"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

const (
	slackToken  = "xoxb-test-token"
	slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
)

// chatEnv is a running Gatehouse with a chat file whose Slack app is the
// stand-in: channel C0OPS gets permission and question requests in full,
// C0PAGER high-risk ones in generic mode.
type chatEnv struct {
	*webtest.Env
	slack *slackStandIn
	path  string
	sent  chan struct{} // a value after every recorded send
}

const chatFile = `slack:
  token_env: GH_TEST_SLACK_TOKEN
  signing_secret_env: GH_TEST_SLACK_SECRET
  api_url: %s
destinations:
  - name: ops
    slack: C0OPS
    detail: full
  - name: pager
    slack: C0PAGER
routes:
  - to: [ops]
    kind: [permission, question]
  - to: [pager]
    risk: [high]
`

// newChatEnv starts Gatehouse on a fresh database of dialect with the chat
// file above.
func newChatEnv(t *testing.T, dialect string) *chatEnv {
	t.Helper()
	st, changes := storetest.Store(t, dialect)
	return startChat(t, st, changes, newSlackStandIn(t, slackToken, "C0OPS", "C0PAGER"), "")
}

// startChat starts Gatehouse with chat on an existing store (a restart).
func startChat(t *testing.T, st *store.Store, changes *store.Changes, sl *slackStandIn, file string) *chatEnv {
	t.Helper()
	t.Setenv("GH_TEST_SLACK_TOKEN", slackToken)
	t.Setenv("GH_TEST_SLACK_SECRET", slackSecret)
	if file == "" {
		file = writeFile(t, fmt.Sprintf(chatFile, sl.APIURL()))
	}
	sent := make(chan struct{}, 1000)
	env := webtest.NewApp(t, app.Config{Store: st, Changes: changes, ChatFile: file,
		ChatSent: func(store.ChatMessage, store.ChatSend) { sent <- struct{}{} }})
	return &chatEnv{Env: env, slack: sl, path: file, sent: sent}
}

func writeFile(t testing.TB, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "chat.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// operator makes an operator token and links Slack user uid to it through
// a link code and the slash command, as a person would.
func (e *chatEnv) operator(t *testing.T, name, uid string, groups ...string) string {
	t.Helper()
	tok := e.NamedToken(store.NewToken{Role: models.RoleOperator, Name: name, Groups: groups})
	status, body := e.Do("POST", "/v1/chat/link-codes", tok, nil)
	if status != 201 {
		t.Fatalf("link code: %d %s", status, body)
	}
	code := webtest.JSON(t, body)["code"].(string)
	status, body = e.slashCommand(t, uid, "link "+code)
	if status != 200 || !strings.Contains(string(body), "Linked") {
		t.Fatalf("link: %d %s", status, body)
	}
	return tok
}

var triggers atomic.Int64

// fixture reads a recorded payload and fills its placeholders.
func fixture(t testing.TB, name string, fill map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "slack", name))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	fill["TRIGGER"] = "trg" + strconv.FormatInt(triggers.Add(1), 10)
	for k, v := range fill {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

// signed is a Slack callback's headers for body at a time, with a secret.
func signed(body string, at time.Time, secret string) http.Header {
	return chattest.SignSlack(body, at, secret)
}

// post sends a callback as Slack does.
func (e *chatEnv) post(t testing.TB, path, body string, h http.Header) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (e *chatEnv) slashCommand(t testing.TB, uid, text string) (int, []byte) {
	t.Helper()
	body := fixture(t, "slash_command.txt", map[string]string{"USER": uid, "CODE": "X"})
	body = strings.Replace(body, "text=link+X", "text="+url.QueryEscape(text), 1)
	return e.post(t, "/chat/slack/commands", body, signed(body, time.Now(), slackSecret))
}

// clickBody is the form Slack posts when uid clicks a button.
func clickBody(t testing.TB, uid, action, value string) string {
	payload := fixture(t, "block_actions.json", map[string]string{"USER": uid, "ACTION": action, "VALUE": value, "TS": "1700000000.000001"})
	return "payload=" + url.QueryEscape(payload)
}

// click is uid clicking the button of option on the version a message showed.
func (e *chatEnv) click(t testing.TB, uid, id string, version int, option string) (int, []byte) {
	t.Helper()
	body := clickBody(t, uid, "gatehouse_decide:"+option, fmt.Sprintf("%s|%d|%s", id, version, option))
	return e.post(t, "/chat/slack/interactions", body, signed(body, time.Now(), slackSecret))
}

// file files a request as an agent and returns its id and version.
func (e *chatEnv) file(t testing.TB, agent string, body map[string]any) (string, int) {
	t.Helper()
	r := e.File(agent, body)
	return r["id"].(string), int(r["version"].(float64))
}

// get reads a request as an operator.
func (e *chatEnv) get(t testing.TB, op, id string) map[string]any {
	t.Helper()
	status, body := e.Do("GET", "/v1/requests/"+id, op, nil)
	if status != 200 {
		t.Fatalf("get %s: %d %s", id, status, body)
	}
	return webtest.JSON(t, body)
}

// texts is every text in a message's blocks, joined, to assert on.
func texts(t testing.TB, c slackCall) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c.blocks(t)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// buttons are the action ids of a message's buttons.
func buttons(t testing.TB, c slackCall) []string {
	var out []string
	for _, b := range c.blocks(t) {
		if b["type"] != "actions" {
			continue
		}
		for _, el := range b["elements"].([]any) {
			out = append(out, el.(map[string]any)["action_id"].(string))
		}
	}
	return out
}
