package park

import (
	"sync"

	"github.com/gatehousehq/gatehouse/models"
)

// The parked waits on one request share one watch: a waitSet. The
// announcement that fires it hands the whole set over at once, so the
// announcer does one step per set, not one per waiter, and the release
// workers take the set in slices (release.go).

// waitSet is the parked waits on request id that one watch serves.
type waitSet struct {
	id    string
	waits []*Wait     // each knows its slot, so it leaves in one step
	stop  func() bool // the set's watch
}

// waitSets holds the sets that still watch, by request id.
type waitSets struct {
	mu   sync.Mutex
	sets map[string]*waitSet
}

// join adds p to the set on its request, watching the request when the set
// is new. A change announced after join reaches p.
func (pk *Parker) join(p *Wait) {
	ws := &pk.sets
	ws.mu.Lock()
	defer ws.mu.Unlock()
	set := ws.sets[p.id]
	if set == nil {
		set = &waitSet{id: p.id}
		ws.sets[p.id] = set
		// Under ws.mu: the announcer calls fired without the watcher's lock,
		// so the order ws.mu, then the watcher's, is the only one.
		set.stop = pk.cfg.Watcher.WatchFunc(p.id, func(ch models.Change) { pk.fired(set, ch) })
	}
	p.set, p.slot = set, len(set.waits)
	set.waits = append(set.waits, p)
}

// leave takes p out of its set and reports whether it did so before the set
// fired (false: the change is with p or on its way).
func (pk *Parker) leave(p *Wait) bool {
	ws := &pk.sets
	ws.mu.Lock()
	defer ws.mu.Unlock()
	set := p.set
	p.set = nil
	if set == nil || ws.sets[set.id] != set {
		return false
	}
	last := set.waits[len(set.waits)-1]
	set.waits[p.slot], last.slot = last, p.slot
	set.waits[len(set.waits)-1] = nil
	set.waits = set.waits[:len(set.waits)-1]
	if len(set.waits) == 0 {
		delete(ws.sets, set.id)
		set.stop()
	}
	return true
}

// fired is the set's watch callback, on the announcer: the set stops
// watching and its waits get ch. A wait that joins between the watch's
// removal and this call gets ch too, though its read may already show it:
// it then watches again and reads (onChange), so no later change is missed.
func (pk *Parker) fired(set *waitSet, ch models.Change) {
	ws := &pk.sets
	ws.mu.Lock()
	if ws.sets[set.id] == set {
		delete(ws.sets, set.id)
	}
	waits := set.waits
	set.waits = nil
	ws.mu.Unlock()
	pk.deliver(waits, ch)
}
