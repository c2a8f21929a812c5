package chat

import (
	"fmt"
	"os"
	"slices"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
	"github.com/gatehousehq/gatehouse/internal/yamlfile"
	"github.com/gatehousehq/gatehouse/models"
)

// Detail modes: what a destination's messages carry.
const (
	// DetailGeneric sends "1 request needs you", the kind and a link: no
	// title, command, cwd or options (the default).
	DetailGeneric = "generic"
	// DetailFull sends what the page shows: title, who asks, the command or
	// detail, time left, and a button per option.
	DetailFull = "full"
)

// Config is the chat file: the apps, where messages go, and which requests
// go where. Secrets are named by environment variable, never written in it.
type Config struct {
	Slack        *SlackConfig    `yaml:"slack"`
	Telegram     *TelegramConfig `yaml:"telegram"`
	Destinations []Destination   `yaml:"destinations"`
	Routes       []Route         `yaml:"routes"`

	file string
}

// SlackConfig is the Slack app: its bot token and signing secret, read from
// the environment variables named here.
type SlackConfig struct {
	TokenEnv         string `yaml:"token_env"`
	SigningSecretEnv string `yaml:"signing_secret_env"`
	// APIURL replaces https://slack.com/api/ (a stand-in in tests).
	APIURL string `yaml:"api_url"`

	token, secret string
}

// TelegramConfig is the Telegram bot: its token and the webhook's secret
// token, read from the environment variables named here.
type TelegramConfig struct {
	TokenEnv       string `yaml:"token_env"`
	SecretTokenEnv string `yaml:"secret_token_env"`
	// APIURL replaces https://api.telegram.org (a stand-in in tests).
	APIURL string `yaml:"api_url"`

	token, secret string
}

// Destination is one channel or chat messages are posted to: a Slack
// channel or a Telegram chat, not both.
type Destination struct {
	Name string `yaml:"name"`
	// Slack is a Slack channel id (C…); the app must be in the channel.
	Slack string `yaml:"slack"`
	// Telegram is a Telegram chat id (a user's, or a group's: -100…); the
	// bot must be in the chat.
	Telegram string `yaml:"telegram"`
	Detail   string `yaml:"detail"`
}

// Route sends the requests it matches to its destinations. Every field set
// must match (a list matches any of its values); a route with no match
// fields matches every request. A request goes to every destination of
// every route that matches it; with no routes nothing is posted.
type Route struct {
	To      []string `yaml:"to"`
	Kind    []string `yaml:"kind"`
	Risk    []string `yaml:"risk"`
	Runtime []string `yaml:"runtime"` // runtime ids or names
	Group   []string `yaml:"group"`   // a group the approval policy names
	Tool    []string `yaml:"tool"`
}

var (
	// telegramSecret is what Telegram accepts as a webhook's secret_token.
	telegramSecret = lazyregexp.New(`^[A-Za-z0-9_-]{16,256}$`)
	telegramChat   = lazyregexp.New(`^-?[0-9]{1,20}$`)
)

// Load reads and checks a chat file, with its secrets from the environment.
// Every problem names the setting.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chat config: %w", err)
	}
	return Parse(path, data, os.Getenv)
}

// Parse is Load on data, with getenv for the secrets.
func Parse(name string, data []byte, getenv func(string) string) (*Config, error) {
	c := &Config{file: name}
	if _, err := yamlfile.Decode(data, c); err != nil {
		return nil, fmt.Errorf("chat config %s:%v", name, err)
	}
	if err := c.check(getenv); err != nil {
		return nil, fmt.Errorf("chat config %s: %w", name, err)
	}
	return c, nil
}

func (c *Config) check(getenv func(string) string) error {
	if s := c.Slack; s != nil {
		if s.TokenEnv == "" || s.SigningSecretEnv == "" {
			return fmt.Errorf("slack.token_env and slack.signing_secret_env are required")
		}
		if s.token = getenv(s.TokenEnv); s.token == "" {
			return fmt.Errorf("slack.token_env: environment variable %s is empty or unset", s.TokenEnv)
		}
		if s.secret = getenv(s.SigningSecretEnv); s.secret == "" {
			return fmt.Errorf("slack.signing_secret_env: environment variable %s is empty or unset", s.SigningSecretEnv)
		}
	}
	if t := c.Telegram; t != nil {
		if t.TokenEnv == "" || t.SecretTokenEnv == "" {
			return fmt.Errorf("telegram.token_env and telegram.secret_token_env are required")
		}
		if t.token = getenv(t.TokenEnv); t.token == "" {
			return fmt.Errorf("telegram.token_env: environment variable %s is empty or unset", t.TokenEnv)
		}
		if t.secret = getenv(t.SecretTokenEnv); !telegramSecret.MatchString(t.secret) {
			return fmt.Errorf("telegram.secret_token_env: environment variable %s must hold 16 to 256 of A-Z a-z 0-9 _ -", t.SecretTokenEnv)
		}
	}
	names := map[string]bool{}
	for i := range c.Destinations {
		d := &c.Destinations[i]
		where := fmt.Sprintf("destinations[%d]", i)
		if !models.NamePattern.MatchString(d.Name) {
			return fmt.Errorf("%s.name %q must match %s", where, d.Name, models.NamePattern)
		}
		if names[d.Name] {
			return fmt.Errorf("%s.name %q is used twice", where, d.Name)
		}
		names[d.Name] = true
		switch d.Detail {
		case "":
			d.Detail = DetailGeneric
		case DetailGeneric, DetailFull:
		default:
			return fmt.Errorf("%s.detail %q must be generic or full", where, d.Detail)
		}
		switch {
		case (d.Slack == "") == (d.Telegram == ""):
			return fmt.Errorf("%s: name one Slack channel (slack: C…) or one Telegram chat (telegram: ID)", where)
		case d.Slack != "" && c.Slack == nil:
			return fmt.Errorf("%s.slack: a Slack channel needs the slack: app settings", where)
		case d.Telegram != "" && c.Telegram == nil:
			return fmt.Errorf("%s.telegram: a Telegram chat needs the telegram: bot settings", where)
		case d.Telegram != "" && !telegramChat.MatchString(d.Telegram):
			return fmt.Errorf("%s.telegram %q must be a numeric chat id", where, d.Telegram)
		}
	}
	for i, r := range c.Routes {
		where := fmt.Sprintf("routes[%d]", i)
		if len(r.To) == 0 {
			return fmt.Errorf("%s.to: name at least one destination", where)
		}
		for _, to := range r.To {
			if !names[to] {
				return fmt.Errorf("%s.to: no destination is named %q", where, to)
			}
		}
		for _, k := range r.Kind {
			if !models.Kinds[k] {
				return fmt.Errorf("%s.kind: %q is not a kind", where, k)
			}
		}
		for _, k := range r.Risk {
			if !models.Risks[k] {
				return fmt.Errorf("%s.risk: %q is not low, medium or high", where, k)
			}
		}
	}
	return nil
}

// destination returns the destination named name.
func (c *Config) destination(name string) (Destination, bool) {
	i := slices.IndexFunc(c.Destinations, func(d Destination) bool { return d.Name == name })
	if i < 0 {
		return Destination{}, false
	}
	return c.Destinations[i], true
}
