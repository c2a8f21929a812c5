package chat_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/chat"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// Bad configuration stops serve with a message naming the setting.
func TestChatConfigRefused(t *testing.T) {
	sl := newSlackStandIn(t, slackToken, "C0OPS", "C0PAGER")
	good := fmt.Sprintf(chatFile, sl.APIURL())
	for _, tc := range []struct {
		name, file, token, secret, want string
	}{
		{"unknown channel", strings.Replace(good, "C0PAGER", "C0GONE", 1), slackToken, slackSecret, "destinations[1].slack: channel C0GONE: channel_not_found"},
		{"missing secret", good, slackToken, "", "slack.signing_secret_env: environment variable GH_TEST_SLACK_SECRET is empty or unset"},
		{"missing token", good, "", slackSecret, "slack.token_env: environment variable GH_TEST_SLACK_TOKEN is empty or unset"},
		{"token rejected", good, "xoxb-revoked", slackSecret, "slack.token_env (GH_TEST_SLACK_TOKEN): Slack refused the token: invalid_auth"},
		// A DNS failure or a refused connection is the network, not the token.
		{"Slack unreachable", fmt.Sprintf(chatFile, deadURL(t)), slackToken, slackSecret, "cannot reach Slack (check this host's DNS, network and proxy); the token is not yet checked"},
		{"unknown destination", good + "  - to: [nowhere]\n", slackToken, slackSecret, `routes[2].to: no destination is named "nowhere"`},
		{"unknown field", good + "channels: []\n", slackToken, slackSecret, `unknown field "channels"`},
		{"bad detail", strings.Replace(good, "detail: full", "detail: some", 1), slackToken, slackSecret, `destinations[0].detail "some" must be generic or full`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GH_TEST_SLACK_TOKEN", tc.token)
			t.Setenv("GH_TEST_SLACK_SECRET", tc.secret)
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

func TestChatRoutes(t *testing.T) {
	env := map[string]string{"T": "x", "S": "y"}
	c, err := chat.Parse("chat.yaml", []byte(`
slack: {token_env: T, signing_secret_env: S}
destinations:
  - {name: ops, slack: C1}
  - {name: release, slack: C2, detail: full}
routes:
  - {to: [ops]}
  - {to: [release], group: [release], risk: [high, medium]}
`), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  string
		want []string
	}{
		{"every request to ops", `{"kind":"permission","status":"open"}`, []string{"ops"}},
		{"release group, high risk", `{"kind":"permission","status":"open","risk":"high","approvers":{"groups":["release"],"required":2}}`, []string{"ops", "release"}},
		{"release group, low risk", `{"kind":"permission","status":"open","risk":"low","approvers":{"groups":["release"],"required":2}}`, []string{"ops"}},
		{"not open", `{"kind":"permission","status":"resolved"}`, nil},
		// An escalation step that made release approvers routes the request
		// to release's channel from then on.
		{"escalated to release", `{"kind":"permission","status":"open","risk":"high","approvers":{"groups":["dev"],"required":1},"escalations":[{"step":1,"groups":["release"],"why":"due"}]}`, []string{"ops", "release"}},
		{"not yet escalated", `{"kind":"permission","status":"open","risk":"high","approvers":{"groups":["dev"],"required":1}}`, []string{"ops"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := request(t, tc.req)
			if got := c.RouteOf(r, ""); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%v, want %v", got, tc.want)
			}
		})
	}
}

// deadURL is an http URL where nothing listens: a connection to it is
// refused, as a name that does not resolve fails, before any answer.
func deadURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}
