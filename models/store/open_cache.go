package store

import (
	"slices"
	"sync"

	"github.com/gatehousehq/gatehouse/models"
)

// maxOpenCached and maxOpenCachedBytes bound the open records kept (their
// count, and roughly the bytes of their text, which a filing may make up to
// ~100 KiB); past either the cache starts over. A decision usually follows
// its filing within moments, so a small window holds nearly every one.
const (
	maxOpenCached      = 1024
	maxOpenCachedBytes = 4 << 20
)

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
	mu    sync.Mutex
	m     map[string]models.Request
	bytes int // textBytes of the records in m
}

func newOpenCache() *openCache { return &openCache{m: map[string]models.Request{}} }

// get returns a copy of the cached record of id, which the caller may change.
func (c *openCache) get(id string) (*models.Request, bool) {
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
func (c *openCache) committed(changes []models.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range changes {
		if ch.Record == nil {
			continue
		}
		cur, had := c.m[ch.RequestID]
		if had && ch.Record.Open() && cur.Version >= ch.Record.Version {
			continue
		}
		if had {
			c.remove(ch.RequestID, &cur)
		}
		if !ch.Record.Open() {
			continue
		}
		n := textBytes(ch.Record)
		if len(c.m) >= maxOpenCached || c.bytes+n > maxOpenCachedBytes {
			clear(c.m)
			c.bytes = 0
		}
		c.m[ch.RequestID] = *ch.Record
		c.bytes += n
	}
}

// drop forgets id.
func (c *openCache) drop(id string) {
	c.mu.Lock()
	if r, ok := c.m[id]; ok {
		c.remove(id, &r)
	}
	c.mu.Unlock()
}

func (c *openCache) remove(id string, r *models.Request) {
	delete(c.m, id)
	c.bytes -= textBytes(r)
}

// textBytes is roughly what r's text takes: the fields a filer sizes.
func textBytes(r *models.Request) int {
	n := len(r.Title) + len(r.Summary) + len(r.Detail) + len(r.Command) + len(r.Tool)
	for _, o := range r.Options {
		n += len(o.ID) + len(o.Label) + len(o.Saves)
	}
	for k, v := range r.SourceRef {
		n += len(k) + len(v)
	}
	return n
}
