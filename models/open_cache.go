package models

import (
	"slices"
	"sync"
)

// maxOpenCached bounds the open records kept; past it the cache starts over.
// A decision usually follows its filing within moments, so a small window
// holds nearly every one.
const maxOpenCached = 1024

// openCache keeps the committed record of the open requests this store wrote
// last, so a decision on one need not read it back: the read was most of a
// decision's time outside its commit. It is only ever a guess at the current
// record. A decision checked against it is still written on the condition
// that the version and status are the ones cached, so a record changed
// elsewhere (another replica, a sweep) makes the write match nothing and the
// decision reads the record in its transaction and says what happened; and a
// decision the guess refuses is checked again on a fresh read, so a stale
// entry never refuses one the database would take.
type openCache struct {
	mu sync.Mutex
	m  map[string]Request
}

func newOpenCache() *openCache { return &openCache{m: map[string]Request{}} }

// get returns a copy of the cached record of id, which the caller may change.
func (c *openCache) get(id string) (*Request, bool) {
	c.mu.Lock()
	r, ok := c.m[id]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	r.Votes = slices.Clone(r.Votes)
	return &r, true
}

// committed takes the records of changes just committed: an open one is kept
// (unless an entry as new is there already), any other is dropped.
func (c *openCache) committed(changes []Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range changes {
		if ch.Record == nil {
			continue
		}
		if !ch.Record.Open() {
			delete(c.m, ch.RequestID)
			continue
		}
		if cur, ok := c.m[ch.RequestID]; ok && cur.Version >= ch.Record.Version {
			continue
		}
		if len(c.m) >= maxOpenCached {
			clear(c.m)
		}
		c.m[ch.RequestID] = *ch.Record
	}
}

// drop forgets id.
func (c *openCache) drop(id string) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}
