package store

import (
	"sync"

	"github.com/gatehousehq/gatehouse/internal/phase"
	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// feedEntry reports whether ch is a decision a runtime's feed may now hold.
func feedEntry(ch models.Change) bool {
	return ch.RuntimeID != "" && ch.Status == models.StatusResolved && ch.Action != models.ActionActuation
}

// Announcer is where the store announces a committed change. Changes (in process)
// is one; a PostgreSQL announcer relays through NOTIFY to every replica's Changes.
type Announcer interface {
	Announce(models.Change)
}

// TxAnnouncer is an Announcer that can also announce from inside the committing
// transaction, so the announcement goes out exactly when, and only if, the
// change commits. The store prefers it (PGAnnouncer: NOTIFY in the transaction).
type TxAnnouncer interface {
	Announcer
	AnnounceTx(tx *gorm.DB, ch models.Change) error
}

// Preparer is an Announcer told, inside the committing transaction, of each
// change it will be asked to announce if the commit succeeds, so it can start
// deriving what it will send while the COMMIT's fsync runs. It must send
// nothing: a change that does not commit is never announced.
type Preparer interface {
	Prepare(models.Change)
}

// Subscription receives every change. C is buffered; a subscriber that falls
// behind is dropped (C closed, Lagged true) rather than slowing the publisher, so
// it must resync from the store.
type Subscription struct {
	C      <-chan models.Change
	c      chan models.Change
	owner  *Changes
	lagged bool
}

// Close stops the subscription.
func (s *Subscription) Close() { s.owner.unsubscribe(s, false) }

// Lagged reports whether the subscription was dropped for falling behind.
func (s *Subscription) Lagged() bool {
	s.owner.mu.Lock()
	defer s.owner.mu.Unlock()
	return s.lagged
}

// Changes fans out announcements in process: to subscribers (hub, push,
// forwarder) and to waiters keyed by request id (long-polls).
type Changes struct {
	mu       sync.Mutex
	subs     map[*Subscription]struct{}
	waiters  map[string]map[*watch]struct{}
	onRevoke []func()
	warm     func(models.Change) // see WarmWith
}

// WarmWith has Prepare call f on a goroutine of its own with a change whose
// request someone waits on, before its commit: the waiters' answer (one
// encoding, shared by every copy of the change) is then made while the
// commit's fsync runs, not after it.
func (c *Changes) WarmWith(f func(models.Change)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warm = f
}

// Prepare starts warming ch (WarmWith) when a waiter watches its request.
func (c *Changes) Prepare(ch models.Change) {
	if ch.Record == nil {
		return
	}
	c.mu.Lock()
	f, waited := c.warm, len(c.waiters[ch.RequestID]) > 0
	c.mu.Unlock()
	if f != nil && waited {
		go f(ch)
	}
}

// OnRevoke registers f to be called at every revocation the replica listener
// relays, and at every resync (revocations may have been missed).
func (c *Changes) OnRevoke(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onRevoke = append(c.onRevoke, f)
}

// Revoked calls the OnRevoke functions. It returns once they have run, so a
// call authenticated after it cannot use what was revoked.
func (c *Changes) Revoked() {
	c.mu.Lock()
	fs := c.onRevoke
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// watch is one waiter: f is called once, with the change that woke it.
type watch struct{ f func(models.Change) }

// NewChanges returns an empty fan-out.
func NewChanges() *Changes {
	return &Changes{subs: map[*Subscription]struct{}{}, waiters: map[string]map[*watch]struct{}{}}
}

// Announce publishes ch to all subscribers and wakes the waiters on its request,
// and on a decision the waiters on its runtime's feed (RuntimeKey).
func (c *Changes) Announce(ch models.Change) {
	phase.Mark(phase.Announced)
	ch = ch.Shared()
	c.mu.Lock()
	ws := c.waiters[ch.RequestID]
	delete(c.waiters, ch.RequestID)
	var rs map[*watch]struct{}
	if feedEntry(ch) {
		key := models.RuntimeKey(ch.RuntimeID)
		rs = c.waiters[key]
		delete(c.waiters, key)
	}
	c.mu.Unlock()
	// Each waiter is called once, after its removal, outside the lock; its f
	// must not block. Waiters go first: a subscriber's wake-up competes for
	// the CPU with the waiter's answer.
	for w := range ws {
		w.f(ch)
	}
	for w := range rs {
		w.f(ch)
	}
	var slow []*Subscription
	c.mu.Lock()
	for s := range c.subs {
		select {
		case s.c <- ch:
		default:
			slow = append(slow, s)
		}
	}
	c.mu.Unlock()
	for _, s := range slow {
		c.unsubscribe(s, true)
	}
}

// Subscribe returns a subscription to every change with a buffer of n.
func (c *Changes) Subscribe(n int) *Subscription {
	ch := make(chan models.Change, n)
	s := &Subscription{C: ch, c: ch, owner: c}
	c.mu.Lock()
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	return s
}

func (c *Changes) unsubscribe(s *Subscription, lagged bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.subs[s]; !ok {
		return
	}
	delete(c.subs, s)
	s.lagged = lagged
	close(s.c)
}

// WatchFunc calls f once, at the next change of request id (or, for a
// RuntimeKey, the runtime's next decision), with that change; on a resync the
// change has ActionResync and no record. f runs on the announcer's goroutine
// and must not block. stop cancels the watch and reports whether it did so
// before f was called (false: f has been or is being called).
func (c *Changes) WatchFunc(id string, f func(models.Change)) (stop func() bool) {
	w := &watch{f: f}
	c.mu.Lock()
	set := c.waiters[id]
	if set == nil {
		set = map[*watch]struct{}{}
		c.waiters[id] = set
	}
	set[w] = struct{}{}
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		set := c.waiters[id]
		if _, ok := set[w]; !ok {
			return false
		}
		delete(set, w)
		if len(set) == 0 {
			delete(c.waiters, id)
		}
		return true
	}
}

// Resync tells every subscriber to reload (a Change with ActionResync) and wakes
// every watcher so its wait re-reads the record. The PostgreSQL announcer calls
// it whenever its listen connection is (re)established, because notifications
// sent while it was down are gone.
func (c *Changes) Resync() {
	c.Revoked()
	c.mu.Lock()
	ws := c.waiters
	c.waiters = map[string]map[*watch]struct{}{}
	c.mu.Unlock()
	resync := models.Change{Action: models.ActionResync}
	c.Announce(resync)
	for _, set := range ws {
		for w := range set {
			w.f(resync)
		}
	}
}
