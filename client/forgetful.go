package client

import "time"

// forgetful is a map whose entries are dropped once their time has passed. A
// queue in insertion order makes forgetting a walk from its front, not a scan
// of the whole map on every call. Expiries are near insertion order, so an
// entry may outlive its time until those queued before it go, never the reverse.
type forgetful[V any] struct {
	m map[string]remembered[V]
	q []queued
}

type remembered[V any] struct {
	v     V
	until time.Time
}

type queued struct {
	key   string
	until time.Time
}

func (f *forgetful[V]) get(key string) (V, bool) {
	e, ok := f.m[key]
	return e.v, ok
}

func (f *forgetful[V]) put(key string, v V, until time.Time) {
	if f.m == nil {
		f.m = map[string]remembered[V]{}
	}
	f.m[key] = remembered[V]{v, until}
	f.q = append(f.q, queued{key, until})
}

func (f *forgetful[V]) del(key string) { delete(f.m, key) }

// forget drops what expired before now. A queued key that was put again later
// is dropped only with its latest entry.
func (f *forgetful[V]) forget(now time.Time) {
	n := 0
	for ; n < len(f.q) && now.After(f.q[n].until); n++ {
		if e, ok := f.m[f.q[n].key]; ok && now.After(e.until) {
			delete(f.m, f.q[n].key)
		}
	}
	f.q = f.q[n:]
	if len(f.q) == 0 {
		f.q = nil // let the backing array go
	}
}
