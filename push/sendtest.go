package push

import (
	"context"

	"github.com/gatehousehq/gatehouse/models"
)

// TestStore is what SendTest needs (store.Store).
type TestStore interface {
	Recorder
	ListDevices(ctx context.Context, retired bool) ([]models.Device, error)
}

// TestResult is what a test push to one device came to.
type TestResult struct {
	Device models.Device
	Result Result
}

// SendTest sends one test notification to every live device, once each (a
// refusal retires the device as a real push would), records the attempts and
// returns each result.
func SendTest(ctx context.Context, store TestStore, s Senders, baseURL string) ([]TestResult, error) {
	devs, err := store.ListDevices(ctx, false)
	if err != nil {
		return nil, err
	}
	d := &deliverer{store: store, attempts: 1, observe: func(Event) {}}
	m := Message{Type: TypeTest, Count: 1, Badge: -1, URL: InboxURL(baseURL)}
	out := make([]TestResult, 0, len(devs))
	for _, dev := range devs {
		var res Result
		if snd := s.For(dev.Kind); snd == nil {
			res = Result{Reason: dev.Kind + " push is not configured on this server"}
		} else {
			res = d.deliver(ctx, snd, job{dev: dev, msg: m})
		}
		out = append(out, TestResult{Device: dev, Result: res})
	}
	return out, nil
}
