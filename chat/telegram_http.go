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
	if !onePerson(&q.From, nil, false) {
		reply(notOnePerson)
		return
	}
	id, version, index, ok := parseButton(q.Data)
	i, err := strconv.Atoi(index)
	if !ok || err != nil {
		reply("Not done: this button is not one of Gatehouse's.")
		return
	}
	req, err := s.store.GetRequest(ctx, id)
	if err != nil {
		reply(refusal(err))
		return
	}
	if req.Version != version {
		// The button's position names an option of the version it showed.
		reply(refusal(&models.Error{Code: models.ECodeVersionConflict, Current: req}))
		return
	}
	o, err := models.SelectOption(req.Options, models.Choice{Position: i + 1})
	if err != nil {
		reply("Not done: this button is not one of Gatehouse's.")
		return
	}
	text, _ := s.decide(ctx, click{Surface: "telegram", User: strconv.FormatInt(q.From.ID, 10), ID: id, Version: version, Option: o.ID})
	reply(text)
}

// Telegram's shared senders: every anonymous admin of a group posts as
// GroupAnonymousBot, a channel's posts come from Channel_Bot, and automatic
// forwards from a linked channel from "Telegram". Each is many people.
var sharedTelegramIDs = map[int64]bool{1087968824: true, 136817688: true, 777000: true}

const notOnePerson = "Not done: Telegram sends this as an identity several people share (an anonymous admin, a channel, an automatic forward or a bot). Link and decide from your own account."

// onePerson reports whether an update comes from one person's own account:
// not on behalf of a chat (sender_chat), not a bot, not one of Telegram's
// shared senders, not an automatic forward. Only such a sender links or
// decides.
func onePerson(from *tgm.User, senderChat *tgm.Chat, autoForward bool) bool {
	return from != nil && !from.IsBot && !sharedTelegramIDs[from.ID] && senderChat == nil && !autoForward
}

// readTelegramMessage takes /link CODE, and replies to a request's message:
// "CHOICE note…" decides with a note, where CHOICE is an option's number as
// the message lists it or an effect word (allow, deny, yes, no…), never an
// option's id; any other text is the answer to a question that takes one
// (but a word several options fit is refused, not taken as an answer).
// The reply decides on the version the message shows.
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
	person := onePerson(m.From, m.SenderChat, m.IsAutomaticForward)
	text := strings.TrimSpace(m.Text)
	if cmd, arg, _ := strings.Cut(text, " "); cmd == "/link" || strings.HasPrefix(cmd, "/link@") {
		if !person {
			slog.Warn("chat: refused a link from a shared Telegram identity", "user", user)
			say(notOnePerson)
			return
		}
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
	row, dest, err := s.telegramRow(ctx, chat, strconv.Itoa(m.ReplyToMessage.ID))
	if err != nil {
		return // a reply to something else
	}
	if !person {
		say(notOnePerson)
		return
	}
	if dest.Detail != DetailFull {
		say("Not done: this message shows no options. Decide on the page: " + strings.TrimSuffix(s.baseURL, "/") + "/requests/" + row.RequestID)
		return
	}
	req, err := s.store.GetRequest(ctx, row.RequestID)
	if err != nil {
		say(refusal(err))
		return
	}
	if req.Version != row.DoneVersion {
		// A number names an option of the version the message shows.
		say(refusal(&models.Error{Code: models.ECodeVersionConflict, Current: req}))
		return
	}
	c := click{Surface: "telegram", User: user, ID: req.ID, Version: row.DoneVersion}
	first, rest, _ := strings.Cut(text, " ")
	o, err := models.SelectOption(req.Options, models.Choice{Typed: first})
	switch {
	case err == nil:
		c.Option, c.Note = o.ID, nonEmpty(strings.TrimSpace(rest))
	case req.AllowAnswer && models.ErrorCode(err) != models.ECodeAmbiguousChoice:
		// Not a choice of an option ("PostgreSQL 17", "3 replicas", "yes,
		// on a question whose options say no effect"): the answer.
		c.Answer = &text
	default:
		say("Not done: " + models.ErrorDetail(err) + ". Then, after a space, a note if you like.")
		return
	}
	out, _ := s.decide(ctx, c)
	say(out)
}

// telegramRow is the outbox row of a message in a Telegram chat, and the
// destination it was posted to.
func (s *Service) telegramRow(ctx context.Context, chat, ref string) (*store.ChatMessage, Destination, error) {
	for _, d := range s.cfg.Destinations {
		if d.Telegram != chat {
			continue
		}
		if m, err := s.store.ChatMessageByRef(ctx, d.Name, chat, ref); err == nil {
			return m, d, nil
		}
	}
	return nil, Destination{}, errors.New("no such message")
}
