// Package retry is Gatehouse's one backoff policy, shared by forwarding to
// runtimes, phone notifications and the runtime's pull loop: exponential from a
// first pause, doubling, capped, with ±50% jitter so clients refused together
// do not come back in lockstep. The arithmetic is cenkalti/backoff's.
package retry

import (
	"time"

	"github.com/cenkalti/backoff/v5"
)

// New is a fresh backoff: its first NextBackOff is about first, each next one
// about double, never more than about max.
func New(first, max time.Duration) *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     first,
		RandomizationFactor: 0.5,
		Multiplier:          2,
		MaxInterval:         max,
	}
	b.Reset()
	return b
}

// After is the pause after the n-th failed attempt (n >= 1), for callers that
// keep the attempt count rather than a backoff (the forward outbox row).
func After(first, max time.Duration, n int) time.Duration {
	b := New(first, max)
	d := b.NextBackOff()
	for i := 1; i < n; i++ {
		d = b.NextBackOff()
	}
	return d
}
