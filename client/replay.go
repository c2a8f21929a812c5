package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// ReplayStore keeps a Handler's replay state (delivery ids seen, versions
// accepted) where a restart cannot lose it. Without one the state is in memory
// only, and a forward captured before a restart could be replayed after it,
// inside the signature window. Load is called once, on the first delivery; Save
// after every change, with entries that expired already dropped. A Save that
// fails refuses the delivery (500, so the server retries): replay protection
// fails closed.
type ReplayStore interface {
	Load() (ReplayState, error)
	Save(ReplayState) error
}

// ReplayState is what a ReplayStore keeps: each entry with the time it may be
// forgotten.
type ReplayState struct {
	Deliveries map[string]time.Time     `json:"deliveries"` // delivery id -> until
	Accepted   map[string]AcceptedUntil `json:"accepted"`   // request id -> version
}

// AcceptedUntil is the last version accepted for a request, kept until Until.
type AcceptedUntil struct {
	Version int       `json:"version"`
	Until   time.Time `json:"until"`
}

// ReplayFile is a ReplayStore in one JSON file, written atomically (a
// temporary file in the same directory, synced, then renamed), so a crash
// leaves the old state or the new one, never half of either.
type ReplayFile struct {
	Path string
	// MaxEntries bounds the file (default 100,000 of each kind); past it the
	// entries that expire soonest are dropped first.
	MaxEntries int

	mu sync.Mutex
}

// Load reads the file; a missing file is an empty state.
func (f *ReplayFile) Load() (ReplayState, error) {
	var st ReplayState
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("replay state %s: %w", f.Path, err)
	}
	return st, nil
}

// Save replaces the file with st, bounded by MaxEntries.
func (f *ReplayFile) Save(st ReplayState) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	limit := f.MaxEntries
	if limit <= 0 {
		limit = 100_000
	}
	st.Deliveries = newest(st.Deliveries, limit, func(t time.Time) time.Time { return t })
	st.Accepted = newest(st.Accepted, limit, func(a AcceptedUntil) time.Time { return a.Until })
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".replay-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}

// newest keeps the limit entries of m that expire last.
func newest[V any](m map[string]V, limit int, until func(V) time.Time) map[string]V {
	if len(m) <= limit {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return until(m[b]).Compare(until(m[a])) })
	out := make(map[string]V, limit)
	for _, k := range keys[:limit] {
		out[k] = m[k]
	}
	return out
}

// state is the handler's replay state as a ReplayState (h.mu held).
func (h *Handler) state() ReplayState {
	st := ReplayState{Deliveries: map[string]time.Time{}, Accepted: map[string]AcceptedUntil{}}
	for k, e := range h.seen.m {
		st.Deliveries[k] = e.until
	}
	for k, e := range h.accepted.m {
		st.Accepted[k] = AcceptedUntil{Version: e.v, Until: e.until}
	}
	return st
}

// restore loads the store's state once, dropping what expired (h.mu held).
func (h *Handler) restore(now time.Time) error {
	if h.Replay == nil || h.loaded {
		return nil
	}
	st, err := h.Replay.Load()
	if err != nil {
		return err
	}
	// Queued in expiry order, as forgetful expects.
	type entry struct {
		key   string
		until time.Time
	}
	var ds []entry
	for k, u := range st.Deliveries {
		ds = append(ds, entry{k, u})
	}
	slices.SortFunc(ds, func(a, b entry) int { return a.until.Compare(b.until) })
	for _, e := range ds {
		h.seen.put(e.key, struct{}{}, e.until)
	}
	var as []entry
	for k, a := range st.Accepted {
		as = append(as, entry{k, a.Until})
	}
	slices.SortFunc(as, func(a, b entry) int { return a.until.Compare(b.until) })
	for _, e := range as {
		h.accepted.put(e.key, st.Accepted[e.key].Version, e.until)
	}
	h.seen.forget(now)
	h.accepted.forget(now)
	h.loaded = true
	return nil
}

// persist saves the state, when there is a store (h.mu held).
func (h *Handler) persist() error {
	if h.Replay == nil {
		return nil
	}
	return h.Replay.Save(h.state())
}
