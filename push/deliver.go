package push

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/internal/retry"
	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
)

// job is one message for one device.
type job struct {
	dev models.Device
	msg Message
}

// lane is the bounded queue and workers of one kind of device, so a hung APNs
// does not hold up Web Push (and the reverse).
type lane struct {
	jobs   chan job
	sender Sender
}

// maxPushPause caps the pause between two tries of one notification.
const maxPushPause = time.Minute

// deliverer tries a job until it is sent, refused for good, or out of attempts,
// and records every attempt.
type deliverer struct {
	store    Recorder
	attempts int
	backoff  time.Duration
	observe  func(Event)
}

// Recorder keeps push attempts (store.Store.RecordPush).
type Recorder interface {
	RecordPush(ctx context.Context, a store.PushAttempt) error
}

func (d *deliverer) run(ctx context.Context, l *lane, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-l.jobs:
			d.deliver(ctx, l.sender, j)
		}
	}
}

// deliver sends j with retries and returns the last result.
func (d *deliverer) deliver(ctx context.Context, s Sender, j job) Result {
	var res Result
	// The shared backoff, so devices refused together do not come back together.
	pauses := retry.New(d.backoff, maxPushPause)
	for attempt := 1; ; attempt++ {
		res = s.Send(ctx, j.dev, j.msg)
		d.record(ctx, j, attempt, res)
		d.observe(Event{Name: "attempt", RequestID: j.msg.RequestID, Message: j.msg, Device: j.dev, Attempt: attempt, Result: res})
		if res.Sent() || res.Retire || !res.Retry || attempt >= d.attempts || ctx.Err() != nil {
			return res
		}
		t := time.NewTimer(pauses.NextBackOff())
		select {
		case <-ctx.Done():
			t.Stop()
			return res
		case <-t.C:
		}
	}
}

func (d *deliverer) record(ctx context.Context, j job, attempt int, res Result) {
	// The attempt happened even when we are shutting down: record it anyway,
	// briefly.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := d.store.RecordPush(rctx, store.PushAttempt{
		DeviceID: j.dev.ID, Kind: j.dev.Kind, Push: j.msg.Type, RequestID: j.msg.RequestID, Version: j.msg.Version,
		Attempt: attempt, Status: res.Status, Result: res.String(), Retire: res.Retire,
	})
	if err != nil {
		slog.Error("push: record attempt", "device", j.dev.ID, "err", err)
	}
}
