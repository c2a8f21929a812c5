package forward

import (
	"maps"
	"sync"
)

// flight counts the sends in flight, in all and by runtime; a send that ends
// wakes the loop through finished.
type flight struct {
	parallel, perRuntime int
	finished             chan struct{}

	mu    sync.Mutex
	total int
	busy  map[string]int
}

// snapshot returns the free slots and a copy of the sends open by runtime.
func (fl *flight) snapshot() (int, map[string]int) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.parallel - fl.total, maps.Clone(fl.busy)
}

// full names the runtimes whose share is all in flight.
func (fl *flight) full() []string {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var out []string
	for id, n := range fl.busy {
		if n >= fl.perRuntime {
			out = append(out, id)
		}
	}
	return out
}

func (fl *flight) take(runtimeID string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.total++
	fl.busy[runtimeID]++
}

func (fl *flight) give(runtimeID string) {
	fl.mu.Lock()
	fl.total--
	if fl.busy[runtimeID]--; fl.busy[runtimeID] <= 0 {
		delete(fl.busy, runtimeID)
	}
	fl.mu.Unlock()
	select {
	case fl.finished <- struct{}{}:
	default:
	}
}
