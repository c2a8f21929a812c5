package push

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/sideshow/apns2"
	"github.com/sideshow/apns2/payload"
	"github.com/sideshow/apns2/token"
)

// APNsConfig is the app's token-based APNs identity (GATEHOUSE_APNS_*).
type APNsConfig struct {
	KeyFile string // the .p8 key from Apple; or Key with its PEM bytes
	Key     []byte
	KeyID   string
	TeamID  string
	Topic   string // the app's bundle id
	Env     string // production (default) or development
	Host    string // overrides Env's host, e.g. a test server
	// RootCAs, when set, is the only trust for the APNs server's certificate.
	// Nil is the system pool, which honours SSL_CERT_FILE.
	RootCAs *x509.CertPool
	Timeout time.Duration // per attempt; default 10s
}

// Enabled reports whether any APNs setting was given.
func (c APNsConfig) Enabled() bool { return c.KeyFile != "" || len(c.Key) > 0 }

// APNs sends through Apple's HTTP/2 provider API with one long-lived client,
// as Apple asks: reconnecting per push looks like an attack to APNs.
type APNs struct {
	client  *apns2.Client
	topic   string
	timeout time.Duration
}

// NewAPNs checks the configuration and builds the client; it does not connect.
func NewAPNs(c APNsConfig) (*APNs, error) {
	var missing []string
	for _, kv := range [][2]string{{EnvAPNsKeyID, c.KeyID}, {EnvAPNsTeamID, c.TeamID}, {EnvAPNsTopic, c.Topic}} {
		if kv[1] == "" {
			missing = append(missing, kv[0])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("apns: %s not set", strings.Join(missing, ", "))
	}
	var key *ecdsa.PrivateKey
	var err error
	if len(c.Key) > 0 {
		if key, err = token.AuthKeyFromBytes(c.Key); err != nil {
			return nil, fmt.Errorf("apns: the .p8 key: %w", err)
		}
	} else if key, err = token.AuthKeyFromFile(c.KeyFile); err != nil {
		// Name the file and the variable: the library's own words ("AuthKey
		// must be a valid .p8 PEM file") say neither.
		return nil, fmt.Errorf("apns: %s=%s: %w; point it at the AuthKey_%s.p8 file downloaded from Apple (Certificates, Identifiers & Profiles → Keys), readable by this user",
			EnvAPNsKeyFile, c.KeyFile, err, orKeyID(c.KeyID))
	}
	host := c.Host
	switch {
	case host != "":
	case c.Env == "" || c.Env == "production":
		host = apns2.HostProduction
	case c.Env == "development":
		host = apns2.HostDevelopment
	default:
		return nil, fmt.Errorf("apns: GATEHOUSE_APNS_ENV %q is not production or development", c.Env)
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	tok := &token.Token{AuthKey: key, KeyID: c.KeyID, TeamID: c.TeamID}
	cl := apns2.NewTokenClient(tok)
	cl.Host = strings.TrimRight(host, "/")
	// APNs speaks only HTTP/2; pings keep a long-lived connection honest.
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: c.RootCAs},
		HTTP2:           &http.HTTP2Config{SendPingTimeout: apns2.ReadIdleTimeout},
		Protocols:       new(http.Protocols),
	}
	tr.Protocols.SetHTTP2(true)
	cl.HTTPClient = &http.Client{Timeout: c.Timeout, Transport: tr}
	return &APNs{client: cl, topic: c.Topic, timeout: c.Timeout}, nil
}

// Close drops idle connections.
func (a *APNs) Close() { a.client.CloseIdleConnections() }

// Send delivers m to one device token, once.
func (a *APNs) Send(ctx context.Context, d models.Device, m Message) Result {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	n := a.notification(d.Token, m)
	res, err := a.client.PushWithContext(ctx, n)
	if err != nil {
		// No answer: a timeout or a dropped connection. Worth retrying unless we
		// are shutting down.
		return Result{Reason: err.Error(), Retry: !errors.Is(err, context.Canceled)}
	}
	r := Result{Status: res.StatusCode, Reason: res.Reason, ID: res.ApnsID}
	switch {
	case res.Sent():
	case res.StatusCode == http.StatusGone, res.Reason == apns2.ReasonBadDeviceToken:
		r.Retire = true
	case retryable(res.StatusCode):
		r.Retry = true
	}
	return r
}

// notification shapes m for APNs. Alerts interrupt (priority 10); badge and
// clearing updates never do (priority 5); a clearing update is a background
// push the app handles by removing the request's notification.
func (a *APNs) notification(deviceToken string, m Message) *apns2.Notification {
	n := &apns2.Notification{DeviceToken: deviceToken, Topic: a.topic, CollapseID: m.RequestID}
	p := payload.NewPayload()
	if m.RequestID != "" {
		p.Custom("request_id", m.RequestID)
	}
	switch m.Type {
	case TypeAlert, TypeTest:
		n.PushType, n.Priority = apns2.PushTypeAlert, apns2.PriorityHigh
		p.AlertTitle(Title).AlertBody(m.Body()).Sound("default").ThreadID(ThreadID).Custom("url", m.URL)
		if m.Badge >= 0 {
			p.Badge(m.Badge)
		}
		if len(m.RequestIDs) > 1 {
			p.Custom("request_ids", capIDs(m.RequestIDs))
		}
		if m.Type == TypeTest {
			n.CollapseID = "gatehouse-test"
		}
	case TypeBadge:
		n.PushType, n.Priority = apns2.PushTypeAlert, apns2.PriorityLow
		p.Badge(max(m.Badge, 0))
	case TypeClear:
		n.PushType, n.Priority = apns2.PushTypeBackground, apns2.PriorityLow
		p.ContentAvailable().Custom("resolved", true)
	}
	n.Payload = p
	return n
}

// orKeyID is the key id for a file name in a message, or a placeholder.
func orKeyID(id string) string {
	if id == "" {
		return "KEYID"
	}
	return id
}
