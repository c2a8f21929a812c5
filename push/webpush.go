package push

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// WebPush sends to browsers' push services with the server's VAPID keys; the
// browser's service worker (static/sw.js) shows the notification.
type WebPush struct {
	Keys    store.VAPIDKeys
	Subject string // "mailto:…" or an https URL the push service may contact
	Client  *http.Client
	Timeout time.Duration // per attempt; default 10s
}

// Send encrypts m for one subscription (RFC 8291) and posts it, once.
func (w *WebPush) Send(ctx context.Context, d models.Device, m Message) Result {
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts := &webpush.Options{
		Subscriber:      w.Subject,
		VAPIDPublicKey:  w.Keys.Public,
		VAPIDPrivateKey: w.Keys.Private,
		TTL:             3600,
		Urgency:         webpush.UrgencyHigh,
		// The push service keeps only the newest message per topic: a clearing
		// update replaces a not-yet-delivered alert for the same request.
		Topic: m.RequestID,
	}
	if w.Client != nil {
		opts.HTTPClient = w.Client
	}
	if m.Type == TypeClear {
		opts.Urgency = webpush.UrgencyNormal
	}
	sub := &webpush.Subscription{Endpoint: d.Token, Keys: webpush.Keys{P256dh: d.P256dh, Auth: d.Auth}}
	resp, err := webpush.SendNotificationWithContext(ctx, WebPayload(m), sub, opts)
	if err != nil {
		return Result{Reason: err.Error(), Retry: !errors.Is(err, context.Canceled)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	r := Result{Status: resp.StatusCode, ID: resp.Header.Get("Location")}
	if !r.Sent() {
		r.Reason = strings.TrimSpace(http.StatusText(resp.StatusCode) + " " + string(body))
	}
	switch {
	case r.Sent():
	case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusGone:
		r.Retire = true // the subscription expired or was withdrawn
	case retryable(resp.StatusCode):
		r.Retry = true
	}
	return r
}
