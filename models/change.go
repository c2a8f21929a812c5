package models

import "sync"

// Change is the announcement made after a commit. It carries the ids and
// version and, when it can, the record as committed (Record), so a woken
// waiter answers without reading the database again.
type Change struct {
	RequestID string `json:"r"`
	Version   int    `json:"v"`
	Status    string `json:"s"`
	Action    string `json:"a"` // create, edit, decide, expire, cancel, dismiss, actuation, …
	// RuntimeID is the runtime the request names, if any, so a runtime's feed
	// wakes for its own decisions only.
	RuntimeID string `json:"rt,omitempty"`
	// Record is the request as this change committed it, shared by every
	// receiver: read it, never change it. It is nil when the announcement could
	// not carry it (a resync; a NOTIFY too big for PostgreSQL's payload limit):
	// receivers then read the record.
	Record *Request `json:"rec,omitempty"`

	memo *memo // shared by every copy of one announcement; see Encoded
}

// memo holds a value derived once from an announcement's record.
type memo struct {
	once sync.Once
	b    []byte
}

// Encoded returns enc(ch.Record), computed by the first receiver that asks and
// shared with every other receiver of the same announcement, so ten thousand
// waiters on one decision encode its answer once. Every caller must pass the
// same encoding. It returns nil when the change carries no record.
func (ch Change) Encoded(enc func(*Request) []byte) []byte {
	if ch.Record == nil {
		return nil
	}
	if ch.memo == nil { // a change that never went through Announce
		return enc(ch.Record)
	}
	ch.memo.once.Do(func() { ch.memo.b = enc(ch.Record) })
	return ch.memo.b
}

// Shared returns ch ready to fan out: every copy of it then shares one memo,
// so Encoded runs once for all of them.
func (ch Change) Shared() Change {
	if ch.memo == nil {
		ch.memo = &memo{}
	}
	return ch
}

// ActionActuation is the action of a change to a request's forwarding state.
const ActionActuation = "actuation"

// RuntimeKey is the Watch key of a runtime's decision feed: its watchers are
// woken by each decision on a request naming the runtime (and by a resync).
func RuntimeKey(runtimeID string) string { return "runtime:" + runtimeID }

// ActionResync is the action of a synthetic change with no request id: changes
// may have been missed (the cross-process listener reconnected), so every
// subscriber must reload what it shows from the store.
const ActionResync = "resync"

// ActionSession is the action of a change to an agent session that changed no
// request (one started, ended or moved where it is): it has no request id, and
// only what shows sessions (the page's Sessions view) looks at it.
const ActionSession = "session"
