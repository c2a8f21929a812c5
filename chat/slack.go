package chat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/slack-go/slack"
)

// slackSurface speaks Slack's Web API (chat.postMessage, chat.update,
// chat.postEphemeral, views.open) as the app's bot, through slack-go.
type slackSurface struct {
	api    *slack.Client
	secret string
}

func newSlack(c *SlackConfig, hc *http.Client) *slackSurface {
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if c.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(strings.TrimSuffix(c.APIURL, "/")+"/"))
	}
	return &slackSurface{api: slack.New(c.token, opts...), secret: c.secret}
}

// check proves the token (auth.test) and every Slack destination's channel
// (conversations.info), naming the setting that is wrong.
func (sl *slackSurface) check(ctx context.Context, cfg *Config) error {
	if _, err := sl.api.AuthTestContext(ctx); unreachable(err) {
		return fmt.Errorf("chat config %s: cannot reach Slack (check this host's DNS, network and proxy); the token is not yet checked: %v", cfg.file, err)
	} else if err != nil {
		return fmt.Errorf("chat config %s: slack.token_env (%s): Slack refused the token: %v", cfg.file, cfg.Slack.TokenEnv, err)
	}
	for i, d := range cfg.Destinations {
		if d.Slack == "" {
			continue
		}
		if _, err := sl.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: d.Slack}); err != nil {
			return fmt.Errorf("chat config %s: destinations[%d].slack: channel %s: %v (is the app in the channel?)", cfg.file, i, d.Slack, err)
		}
	}
	return nil
}

func (sl *slackSurface) post(ctx context.Context, d Destination, v view) (string, string, error) {
	ch, ts, err := sl.api.PostMessageContext(ctx, d.Slack, slackMessage(v)...)
	return ch, ts, slackError(err)
}

func (sl *slackSurface) update(ctx context.Context, d Destination, channel, ref string, v view) error {
	_, _, _, err := sl.api.UpdateMessageContext(ctx, channel, ref, slackMessage(v)...)
	return slackError(err)
}

// ephemeral tells one user something only they see, in the channel they
// clicked in.
func (sl *slackSurface) ephemeral(ctx context.Context, channel, user, text string) error {
	// The text may hold an option's label (the filer's): the block shows it
	// as plain text; the escaped text is the notification's fallback.
	block := slack.NewSectionBlock(slack.NewTextBlockObject(slack.PlainTextType, text, false, false), nil, nil)
	_, err := sl.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(slackLiteral(text), false), slack.MsgOptionBlocks(block))
	return err
}

// slackError classifies a Slack failure: 429 after its Retry-After, 5xx and
// network errors with backoff, a refusal (ok: false) given up.
func slackError(err error) error {
	if err == nil {
		return nil
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return &sendError{RetryAfter: rl.RetryAfter, Msg: err.Error()}
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return &sendError{Permanent: sc.Code < 500 && sc.Code != http.StatusTooManyRequests, Msg: err.Error()}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &sendError{Msg: err.Error()}
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return &sendError{Msg: err.Error()}
		}
		return &sendError{Permanent: true, Msg: err.Error()}
	}
	return &sendError{Msg: err.Error()}
}

// slackEscape makes text safe in mrkdwn: no mention or link an agent could
// smuggle into a channel.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackLiteral is slackEscape that also takes away mrkdwn's formatting:
// Slack has no escape for its markers, so each becomes a look-alike that is
// none ("*Denied*" cannot be bold, "~by rule~" cannot strike). For a
// filer's text in a message's top-level text, which Slack reads as mrkdwn.
func slackLiteral(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;",
		"*", "\u2217", "_", "\u02cd", "~", "\u223c", "`", "\u02cb").Replace(s)
}
