package push

import (
	"fmt"
	"os"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// Config tunes the router. Zero values take the defaults noted.
type Config struct {
	BaseURL string // the inbox's public URL; a tap opens BASE_URL/requests/{id}
	// Grace holds a new request's alert while an operator has the page open and
	// active; decided within it, nothing is pushed. Default 30s; negative: none.
	Grace time.Duration
	// AttentionGrace is how long a badge-level item (a session's waiting
	// item, a review) stays open before it is pushed, once per session per
	// grace; closed sooner, it is never pushed. Default 2 minutes.
	AttentionGrace time.Duration
	// Coalesce gathers the alerts of a burst into one ("3 agents need your
	// decision"). Default 1s; negative: every request alerts alone at once.
	Coalesce time.Duration
	Workers  int           // per kind of device; default 4
	Queue    int           // pending deliveries per kind of device; default 1024; more are dropped
	Attempts int           // tries per delivery (429, 5xx and network errors are retried); default 4
	Backoff  time.Duration // pause before the second try, doubling after; default 1s
	// Forget is how long the router remembers an alerted request to clear it
	// later: no request stays open longer than the store's longest expiry.
	// Default 7 days (store.Store's MaxExpiry).
	Forget time.Duration
	// Now is the clock for Forget and quiet hours; default time.Now.
	Now func() time.Time
	// AfterFunc runs f after d and returns its stop function; default
	// time.AfterFunc. Tests replace it to fire timers themselves.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Observe, when set, is told what the router does (tests, metrics). It must
	// not block.
	Observe func(Event)
}

func (c *Config) defaults() {
	if c.Grace == 0 {
		c.Grace = 30 * time.Second
	}
	if c.AttentionGrace <= 0 {
		c.AttentionGrace = DefaultAttentionGrace
	}
	if c.Coalesce == 0 {
		c.Coalesce = time.Second
	}
	if c.Workers <= 0 {
		c.Workers = 4
	}
	if c.Queue <= 0 {
		c.Queue = 1024
	}
	if c.Attempts <= 0 {
		c.Attempts = 4
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.Forget <= 0 {
		c.Forget = 7 * 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.AfterFunc == nil {
		c.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if c.Observe == nil {
		c.Observe = func(Event) {}
	}
}

// Event is one step of the router, for Config.Observe.
type Event struct {
	Name      string // held, batched, suppressed, claimed-elsewhere, forgotten, queued, dropped, attempt
	RequestID string
	Message   Message
	Device    models.Device
	Attempt   int
	Result    Result
}

// DefaultAttentionGrace is Config.AttentionGrace's default.
const DefaultAttentionGrace = 2 * time.Minute

// Environment variables read by EnvConfig.
const (
	EnvAPNsKeyFile  = "GATEHOUSE_APNS_KEY_FILE" // the .p8 key
	EnvAPNsKeyID    = "GATEHOUSE_APNS_KEY_ID"
	EnvAPNsTeamID   = "GATEHOUSE_APNS_TEAM_ID"
	EnvAPNsTopic    = "GATEHOUSE_APNS_TOPIC" // the app's bundle id
	EnvAPNsEnv      = "GATEHOUSE_APNS_ENV"   // production (default) | development
	EnvAPNsHost     = "GATEHOUSE_APNS_HOST"  // overrides the host (a test server); trust via SSL_CERT_FILE
	EnvPushGrace    = "GATEHOUSE_PUSH_GRACE" // e.g. 30s; 0 keeps the default, -1s turns it off
	EnvVAPIDSubject = "GATEHOUSE_VAPID_SUBJECT"
)

// EnvConfig reads the GATEHOUSE_APNS_* and GATEHOUSE_PUSH_* variables through
// getenv (os.Getenv when nil). APNs is configured only when a key file is named.
func EnvConfig(getenv func(string) string) (APNsConfig, Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	a := APNsConfig{
		KeyFile: getenv(EnvAPNsKeyFile), KeyID: getenv(EnvAPNsKeyID), TeamID: getenv(EnvAPNsTeamID),
		Topic: getenv(EnvAPNsTopic), Env: getenv(EnvAPNsEnv), Host: getenv(EnvAPNsHost),
	}
	var c Config
	if g := getenv(EnvPushGrace); g != "" {
		d, err := time.ParseDuration(g)
		if err != nil {
			return a, c, fmt.Errorf("%s: %w", EnvPushGrace, err)
		}
		c.Grace = d
	}
	return a, c, nil
}

// VAPIDSubject is who push services may contact about our pushes: the
// GATEHOUSE_VAPID_SUBJECT variable, or else the base URL when it is https.
func VAPIDSubject(getenv func(string) string, baseURL string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if s := getenv(EnvVAPIDSubject); s != "" {
		return s
	}
	if len(baseURL) > 8 && baseURL[:8] == "https://" {
		return baseURL
	}
	return "mailto:gatehouse@localhost"
}
