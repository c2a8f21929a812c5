package chat

import (
	"context"
	"net/http"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// Service is Gatehouse's chat surfaces: it posts the requests routed to
// chat destinations, edits each message as its request changes, and takes
// clicks, link codes, notes and answers from the chats as decisions by the
// linked operator.
type Service struct {
	cfg      *Config
	store    Store
	changes  store.Subscriber
	baseURL  string
	id       string
	slack    *slackSurface
	telegram *telegramSurface

	// Now is the clock; it must be the store's, as due times are compared with it.
	Now func() time.Time
	// Backoff is the first retry delay, doubling up to MaxBackoff (defaults
	// 2s and 5m); a 429's Retry-After is honoured instead.
	Backoff, MaxBackoff time.Duration
	// Lease is how long a claim holds (default 1m); MaxSleep bounds a sleep
	// (default 1m), for rows another replica wrote.
	Lease, MaxSleep time.Duration
	// Sent, if set, is told of every send (tests).
	Sent func(m store.ChatMessage, out store.ChatSend)
}

// Options are the service's dependencies beyond its configuration.
type Options struct {
	Store   Store
	Changes store.Subscriber
	BaseURL string // links in messages point at the page here
	Now     func() time.Time
	HTTP    *http.Client // for the chat APIs; default 15s timeout
}

// New builds the service for cfg. Check before Run.
func New(cfg *Config, o Options) (*Service, error) {
	s := &Service{cfg: cfg, store: o.Store, changes: o.Changes, baseURL: o.BaseURL, id: models.NewID("chat_"), Now: o.Now,
		Backoff: 2 * time.Second, MaxBackoff: 5 * time.Minute, Lease: time.Minute, MaxSleep: time.Minute}
	if s.Now == nil {
		s.Now = func() time.Time { return time.Now().UTC() }
	}
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	if cfg.Slack != nil {
		s.slack = newSlack(cfg.Slack, hc)
	}
	if cfg.Telegram != nil {
		var err error
		if s.telegram, err = newTelegram(cfg.Telegram, hc); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Check proves the configuration against the chat services before anything
// is served: the token accepted, every channel known. The error names the
// setting.
func (s *Service) Check(ctx context.Context) error {
	if s.slack != nil {
		if err := s.slack.check(ctx, s.cfg); err != nil {
			return err
		}
	}
	if s.telegram != nil {
		if err := s.telegram.check(ctx, s.cfg, s.baseURL); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the chat services' callbacks under /chat/.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	if s.slack != nil {
		mux.HandleFunc("POST /chat/slack/interactions", s.handleSlackInteraction)
		mux.HandleFunc("POST /chat/slack/commands", s.handleSlackCommand)
	}
	if s.telegram != nil {
		mux.HandleFunc("POST "+telegramWebhookPath, s.handleTelegramUpdate)
	}
	return mux
}

func (s *Service) surfaceOf(d Destination) surface {
	if d.Telegram != "" {
		return s.telegram
	}
	return s.slack
}
