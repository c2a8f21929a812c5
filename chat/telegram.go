package chat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-telegram/bot"
	tgm "github.com/go-telegram/bot/models"
)

// telegramSurface speaks the Telegram Bot API (sendMessage,
// editMessageText, answerCallbackQuery, sendMessage for replies) through
// go-telegram/bot's methods; updates arrive at Gatehouse's own webhook
// handler, which verifies the secret token and acts before it answers.
type telegramSurface struct {
	api    *bot.Bot
	secret string
}

func newTelegram(c *TelegramConfig, hc *http.Client) (*telegramSurface, error) {
	opts := []bot.Option{bot.WithSkipGetMe(), bot.WithHTTPClient(0, hc)}
	if c.APIURL != "" {
		opts = append(opts, bot.WithServerURL(strings.TrimSuffix(c.APIURL, "/")))
	}
	b, err := bot.New(c.token, opts...)
	if err != nil {
		return nil, fmt.Errorf("telegram.token_env (%s): %v", c.TokenEnv, err)
	}
	return &telegramSurface{api: b, secret: c.secret}, nil
}

// check proves the token (getMe) and every Telegram destination's chat
// (getChat), then points the bot's webhook at this server with the secret
// token, naming the setting that is wrong.
func (tg *telegramSurface) check(ctx context.Context, cfg *Config, baseURL string) error {
	if _, err := tg.api.GetMe(ctx); unreachable(err) {
		return fmt.Errorf("chat config %s: cannot reach Telegram (check this host's DNS, network and proxy); the token is not yet checked: %v", cfg.file, err)
	} else if err != nil {
		return fmt.Errorf("chat config %s: telegram.token_env (%s): Telegram refused the token: %v", cfg.file, cfg.Telegram.TokenEnv, err)
	}
	for i, d := range cfg.Destinations {
		if d.Telegram == "" {
			continue
		}
		if _, err := tg.api.GetChat(ctx, &bot.GetChatParams{ChatID: d.Telegram}); err != nil {
			return fmt.Errorf("chat config %s: destinations[%d].telegram: chat %s: %v (is the bot in the chat?)", cfg.file, i, d.Telegram, err)
		}
	}
	hook := strings.TrimSuffix(baseURL, "/") + telegramWebhookPath
	if _, err := tg.api.SetWebhook(ctx, &bot.SetWebhookParams{URL: hook, SecretToken: tg.secret, AllowedUpdates: []string{"message", "callback_query"}}); err != nil {
		return fmt.Errorf("chat config %s: telegram: setWebhook %s: %v (Telegram needs a public https base URL)", cfg.file, hook, err)
	}
	return nil
}

const telegramWebhookPath = "/chat/telegram/webhook"

func (tg *telegramSurface) post(ctx context.Context, d Destination, v view) (string, string, error) {
	text, ents, kb := telegramMessage(v)
	p := &bot.SendMessageParams{ChatID: d.Telegram, Text: text, Entities: ents, LinkPreviewOptions: noPreview()}
	if kb != nil {
		p.ReplyMarkup = kb
	}
	m, err := tg.api.SendMessage(ctx, p)
	if err != nil {
		return "", "", telegramError(err)
	}
	return strconv.FormatInt(m.Chat.ID, 10), strconv.Itoa(m.ID), nil
}

func (tg *telegramSurface) update(ctx context.Context, d Destination, channel, ref string, v view) error {
	id, err := strconv.Atoi(ref)
	if err != nil {
		return &sendError{Permanent: true, Msg: "message id " + ref + " is not a number"}
	}
	text, ents, kb := telegramMessage(v)
	p := &bot.EditMessageTextParams{ChatID: channel, MessageID: id, Text: text, Entities: ents, LinkPreviewOptions: noPreview()}
	if kb != nil {
		p.ReplyMarkup = kb // without one, the keyboard is removed
	}
	_, err = tg.api.EditMessageText(ctx, p)
	if err != nil && strings.Contains(err.Error(), "message is not modified") {
		return nil // it already shows this
	}
	return telegramError(err)
}

func noPreview() *tgm.LinkPreviewOptions {
	off := true
	return &tgm.LinkPreviewOptions{IsDisabled: &off}
}

// telegramError classifies a Bot API failure: 429 after its retry_after,
// a refusal (400, 401, 403, 404) given up, anything else (5xx, network)
// retried with backoff.
func telegramError(err error) error {
	if err == nil {
		return nil
	}
	var tm *bot.TooManyRequestsError
	if errors.As(err, &tm) {
		return &sendError{RetryAfter: secondsOf(tm.RetryAfter), Msg: err.Error()}
	}
	for _, permanent := range []error{bot.ErrorBadRequest, bot.ErrorUnauthorized, bot.ErrorForbidden, bot.ErrorNotFound} {
		if errors.Is(err, permanent) {
			return &sendError{Permanent: true, Msg: err.Error()}
		}
	}
	return &sendError{Msg: err.Error()}
}
