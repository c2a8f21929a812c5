package park

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// After a burst of parked waits the memory their requests used while being
// read (net/http's goroutine stacks and buffers, the handler chain, the
// request) is garbage, but the collector's pacer will not run until the heap
// doubles again, and idle waits allocate nothing: the process would hold the
// burst's peak for minutes. settler returns it to the OS once parking has been
// quiet for settleQuiet after at least settleAfter new parks: one collection
// per burst, a few milliseconds on a small live heap.
const (
	settleAfter = 64
	settleQuiet = time.Second
)

type settler struct {
	mu     sync.Mutex
	parked int // parks since the last settle
	timer  *time.Timer
	free   func() // debug.FreeOSMemory; tests may count
}

// Two collections: the first moves pooled objects (Echo's contexts, which
// keep their last request and its connection's buffers) to the pools' victim
// caches, the second frees them; then the pages go back to the OS.
func newSettler() *settler {
	return &settler{free: func() { runtime.GC(); debug.FreeOSMemory() }}
}

// parkedOne counts a park and (re)arms the quiet timer once enough have come.
func (st *settler) parkedOne() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.parked++
	if st.parked < settleAfter {
		return
	}
	if st.timer == nil {
		st.timer = time.AfterFunc(settleQuiet, st.settle)
		return
	}
	st.timer.Reset(settleQuiet)
}

func (st *settler) settle() {
	st.mu.Lock()
	st.parked, st.timer = 0, nil
	st.mu.Unlock()
	st.free()
}

func (st *settler) stop() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
}
