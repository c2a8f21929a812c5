package review

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Providers are the provider names a configuration may give.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// DefaultTimeout bounds one review call when no timeout is configured.
const DefaultTimeout = 20 * time.Second

// Config says which model reviews and how it is reached. The zero Config
// (no Spec) is the default: no reviewer.
type Config struct {
	// Spec is "anthropic:MODEL" or "openai:MODEL".
	Spec string
	// BaseURL overrides the provider's API address: an OpenAI-compatible
	// server (Ollama, vLLM, LM Studio) or a stand-in for tests.
	BaseURL string
	// APIKey is the provider's key; empty reads the provider's usual
	// variable (ANTHROPIC_API_KEY, OPENAI_API_KEY). A local server may need none.
	APIKey string
	// Timeout bounds one call (DefaultTimeout when zero); past it the review
	// is no_opinion.
	Timeout time.Duration
	// DailyTokens caps input plus output tokens per UTC day; past it reviews
	// are no_opinion without a call. Zero: no cap.
	DailyTokens int64
	// Concurrency caps the calls in flight (default 4).
	Concurrency int
	// HTTP, when set, is the client for the provider's API (tests).
	HTTP *http.Client
}

// Enabled reports whether a reviewer is configured.
func (c Config) Enabled() bool { return c.Spec != "" }

// Provider is one model behind one SDK: it sends a prepared prompt and
// returns the model's structured answer with what it cost.
type Provider interface {
	// Ask sends p and answers the structured answer, or an error saying why
	// there is none (ErrRefused, ErrMalformed, or the call's failure).
	Ask(ctx context.Context, p Prompt) (Answer, Usage, error)
	// Model is "provider:model", as stored on each review.
	Model() string
}

// Answer is the structured answer a model gives.
type Answer struct {
	Risk       string `json:"risk"`
	Authorised string `json:"authorised"`
	Rationale  string `json:"rationale"`
}

// Usage is what one call cost in tokens.
type Usage struct{ In, Out int64 }

// Reasons a call gives no answer, beyond the transport's own.
var (
	ErrRefused   = errors.New("the model refused")
	ErrMalformed = errors.New("the model's answer is not the structured answer asked for")
)

// ParseSpec splits "provider:model", naming what is wrong.
func ParseSpec(spec string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || model == "" || strings.TrimSpace(model) != model {
		return "", "", fmt.Errorf("reviewer %q is not provider:model (anthropic:MODEL or openai:MODEL)", spec)
	}
	switch provider {
	case ProviderAnthropic, ProviderOpenAI:
		return provider, model, nil
	}
	return "", "", fmt.Errorf("reviewer provider %q is not anthropic or openai", provider)
}

// NewProvider builds the provider c names.
func NewProvider(c Config) (Provider, error) {
	provider, model, err := ParseSpec(c.Spec)
	if err != nil {
		return nil, err
	}
	key := c.APIKey
	if provider == ProviderAnthropic {
		if key == "" {
			key = os.Getenv("ANTHROPIC_API_KEY")
		}
		return newAnthropic(model, c.BaseURL, key, c.HTTP), nil
	}
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	return newOpenAI(model, c.BaseURL, key, c.HTTP), nil
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}
