package web

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// freshReads coalesces concurrent reads of one request. A caller joins a read
// that started after it asked, so it sees every commit announced before it
// asked; otherwise it waits for the next read. When ten thousand waiters wake
// on one decision, a handful of database reads answer them all instead of ten
// thousand queued on SQLite's one connection.
type freshReads struct {
	load    func(ctx context.Context, id string) (*models.Request, error)
	seq     atomic.Uint64
	mu      sync.Mutex
	flights map[string]*flight
	onWait  func() // tests: called as a caller starts to wait for a read
}

// flight is one read; next queues the read after it.
type flight struct {
	started uint64 // the sequence number when the read began; 0 while queued
	done    chan struct{}
	r       *models.Request
	err     error
	next    *flight
}

func newFreshReads(load func(ctx context.Context, id string) (*models.Request, error)) *freshReads {
	return &freshReads{load: load, flights: map[string]*flight{}}
}

// get returns request id as committed no earlier than the moment of the call.
func (f *freshReads) get(ctx context.Context, id string) (*models.Request, error) {
	ticket := f.seq.Add(1)
	f.mu.Lock()
	cur := f.flights[id]
	var fl *flight
	lead := false
	switch {
	case cur == nil:
		fl = &flight{started: f.seq.Add(1), done: make(chan struct{})}
		f.flights[id] = fl
		lead = true
	case cur.started > ticket:
		fl = cur
	default:
		if cur.next == nil {
			cur.next = &flight{done: make(chan struct{})}
		}
		fl = cur.next
	}
	f.mu.Unlock()
	if lead {
		f.fly(id, fl)
	} else if f.onWait != nil {
		f.onWait()
	}
	select {
	case <-fl.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if fl.err != nil {
		return nil, fl.err
	}
	r := *fl.r // each caller gets its own copy
	return &r, nil
}

// fly performs a read, then hands over to the queued one, if any, in its own
// goroutine so the leader is not held for it.
func (f *freshReads) fly(id string, fl *flight) {
	// The read serves others too, so it must not die with one caller.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	fl.r, fl.err = f.load(ctx, id)
	cancel()
	f.mu.Lock()
	next := fl.next
	if next != nil {
		next.started = f.seq.Add(1)
		f.flights[id] = next
	} else {
		delete(f.flights, id)
	}
	f.mu.Unlock()
	close(fl.done)
	if next != nil {
		go f.fly(id, next)
	}
}
