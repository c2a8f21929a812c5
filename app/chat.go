package app

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/chat"
)

// chatCheckTimeout bounds the start-up check of the chat configuration
// against the chat services.
const chatCheckTimeout = 30 * time.Second

// openChat loads the chat file and proves it against the chat services
// (token, channels) before anything listens: bad configuration stops serve.
func (a *App) openChat() error {
	cc, err := chat.Load(a.cfg.ChatFile)
	if err != nil {
		return err
	}
	if a.Chat, err = chat.New(cc, chat.Options{Store: a.Store, Changes: a.Changes, BaseURL: a.cfg.BaseURL, Now: a.Store.Now, HTTP: a.cfg.ChatHTTP}); err != nil {
		return err
	}
	a.Chat.Sent = a.cfg.ChatSent
	ctx, cancel := context.WithTimeout(a.ctx, chatCheckTimeout)
	defer cancel()
	return a.Chat.Check(ctx)
}

// chatHandler is the chat callbacks' handler, nil without a chat file.
func (a *App) chatHandler() http.Handler {
	if a.Chat == nil {
		return nil
	}
	return a.Chat.Handler()
}
