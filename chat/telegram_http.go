package chat

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/go-telegram/bot"
	tgm "github.com/go-telegram/bot/models"
)

// handleTelegramUpdate is the bot's webhook: a button press, a reply to a
// request's message (a note or an answer), or /link CODE. The secret token
// Telegram sends with every update is checked first; an update seen before
// (Telegram retries until it gets a 2xx) is answered and not acted on again.
func (s *Service) handleTelegramUpdate(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get("X-Telegram-Bot-Api-Secret-Token")
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.telegram.secret)) != 1 {
		slog.Warn("chat: refused a Telegram update", "remote", r.RemoteAddr)
		http.Error(w, "secret token refused", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSlackBody+1))
	if err != nil || len(body) > maxSlackBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	var u tgm.Update
	if err := json.Unmarshal(body, &u); err != nil {
		http.Error(w, "bad update", http.StatusBadRequest)
		return
	}
	first, err := s.store.FirstChatCallback(r.Context(), "telegram:"+strconv.FormatInt(u.ID, 10))
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	if !first {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	switch {
	case u.CallbackQuery != nil:
		s.pressTelegramButton(ctx, u.CallbackQuery)
	case u.Message != nil:
		s.readTelegramMessage(ctx, u.Message)
	}
}

// pressTelegramButton decides on the version the message showed; the
// presser is told the outcome in an alert only they see.
func (s *Service) pressTelegramButton(ctx context.Context, q *tgm.CallbackQuery) {
	reply := func(text string) {
		if _, err := s.telegram.api.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: q.ID, Text: clip(text, 200), ShowAlert: true}); err != nil {
			slog.Warn("chat: answerCallbackQuery", "err", err)
		}
	}
	id, version, index, ok := parseButton(q.Data)
	if !ok {
		reply("Not done: this button is not one of Gatehouse's.")
		return
	}
	req, err := s.store.GetRequest(ctx, id)
	if err != nil {
		reply(refusal(err))
		return
	}
	i, err := strconv.Atoi(index)
	switch {
	case err != nil || i < 0:
		reply("Not done: this button is not one of Gatehouse's.")
		return
	case i >= len(req.Options) && req.Version != version:
		reply(refusal(&models.Error{Code: models.ECodeVersionConflict, Current: req}))
		return
	case i >= len(req.Options):
		reply("Not done: this button is not one of Gatehouse's.")
		return
	}
	// On a stale version the index may name another option now: Decide
	// refuses the version whatever the option.
	option := req.Options[i].ID
	text, _ := s.decide(ctx, click{Surface: "telegram", User: strconv.FormatInt(q.From.ID, 10), ID: id, Version: version, Option: option})
	reply(text)
}

// readTelegramMessage takes /link CODE, and replies to a request's message:
// "OPTION note…" decides with a note, any other text is the answer to a
// question that takes one. The reply decides on the version the message
// shows.
func (s *Service) readTelegramMessage(ctx context.Context, m *tgm.Message) {
	if m.From == nil {
		return
	}
	user := strconv.FormatInt(m.From.ID, 10)
	chat := strconv.FormatInt(m.Chat.ID, 10)
	say := func(text string) {
		p := &bot.SendMessageParams{ChatID: chat, Text: text, ReplyParameters: &tgm.ReplyParameters{MessageID: m.ID}}
		if _, err := s.telegram.api.SendMessage(ctx, p); err != nil {
			slog.Warn("chat: telegram reply", "err", err)
		}
	}
	text := strings.TrimSpace(m.Text)
	if cmd, arg, _ := strings.Cut(text, " "); cmd == "/link" || strings.HasPrefix(cmd, "/link@") {
		op, err := s.store.RedeemChatLinkCode(ctx, arg, "telegram", "", user)
		if err != nil {
			say(refusal(err))
			return
		}
		slog.Info("chat: linked", "surface", "telegram", "user", user, "operator", op)
		say("Linked: your presses and replies here now decide as operator " + op + ".")
		return
	}
	if m.ReplyToMessage == nil || text == "" {
		return
	}
	row, err := s.telegramRow(ctx, chat, strconv.Itoa(m.ReplyToMessage.ID))
	if err != nil {
		return // a reply to something else
	}
	req, err := s.store.GetRequest(ctx, row.RequestID)
	if err != nil {
		say(refusal(err))
		return
	}
	c := click{Surface: "telegram", User: user, ID: req.ID, Version: row.DoneVersion}
	first, rest, _ := strings.Cut(text, " ")
	if _, ok := req.Option(first); ok {
		c.Option, c.Note = first, nonEmpty(rest)
		if c.Note != nil {
			*c.Note = strings.TrimSpace(*c.Note)
		}
	} else if req.AllowAnswer {
		c.Answer = &text
	} else {
		say("Not done: start the reply with an option id (" + optionIDs(req.Options) + ") and then the note.")
		return
	}
	out, _ := s.decide(ctx, c)
	say(out)
}

// telegramRow is the outbox row of a message in a Telegram chat.
func (s *Service) telegramRow(ctx context.Context, chat, ref string) (*store.ChatMessage, error) {
	for _, d := range s.cfg.Destinations {
		if d.Telegram != chat {
			continue
		}
		if m, err := s.store.ChatMessageByRef(ctx, d.Name, chat, ref); err == nil {
			return m, nil
		}
	}
	return nil, errors.New("no such message")
}

// optionIDs lists the ids a reply may start with.
func optionIDs(opts []models.Option) string {
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.ID
	}
	return strings.Join(ids, ", ")
}
