package push

import (
	"context"
	"fmt"

	"github.com/gatehousehq/gatehouse/models"
)

// Result is what one attempt to one device came to.
type Result struct {
	Status int    // HTTP status; 0 when no answer came
	Reason string // the service's reason, or the error
	ID     string // the service's id for the notification (apns-id), if any
	Retire bool   // the service disowned the device: stop pushing to it
	Retry  bool   // worth another try after a pause (429, 5xx, network)
}

// Sent reports whether the service accepted the notification.
func (r Result) Sent() bool { return r.Status >= 200 && r.Status < 300 }

func (r Result) String() string {
	switch {
	case r.Sent() && r.ID != "":
		return fmt.Sprintf("sent (%d, id %s)", r.Status, r.ID)
	case r.Sent():
		return fmt.Sprintf("sent (%d)", r.Status)
	case r.Status == 0:
		return "error: " + r.Reason
	}
	return fmt.Sprintf("%d %s", r.Status, r.Reason)
}

// Sender delivers one message to one device, once. Retrying is the caller's.
type Sender interface {
	Send(ctx context.Context, d models.Device, m Message) Result
}

// Senders picks the sender for a device's kind. A nil one means that kind is
// not configured.
type Senders struct {
	APNs    Sender
	WebPush Sender
}

// For returns the sender for a kind of device, or nil.
func (s Senders) For(kind string) Sender {
	switch kind {
	case models.DeviceAPNs:
		return s.APNs
	case models.DeviceWebPush:
		return s.WebPush
	}
	return nil
}

// Send delivers once through the sender for d's kind.
func (s Senders) Send(ctx context.Context, d models.Device, m Message) Result {
	snd := s.For(d.Kind)
	if snd == nil {
		return Result{Reason: d.Kind + " push is not configured on this server"}
	}
	return snd.Send(ctx, d, m)
}

// retryable reports whether an HTTP status is worth another try.
func retryable(status int) bool { return status == 429 || status >= 500 }
