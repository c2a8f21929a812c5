// Package phase stamps the steps of a decision's path through the server (the
// request reaching authentication, decoded, checked, its transaction begun and
// committed, announced, its waiter answered) for the benchmark that splits
// the wake into them. Without a recorder, Mark is one atomic load.
package phase

import "sync/atomic"

// Step is one point on a decision's path, in the order a wake passes them.
type Step uint8

const (
	Received       Step = iota // the request reached the authentication middleware
	Authenticated              // its caller is known
	Decoded                    // its body is decoded
	Checked                    // the store's checks passed and the action digest is taken
	Began                      // its group commit's transaction began (BEGIN done)
	Written                    // the transaction's statements ran; COMMIT is next
	Committed                  // COMMIT returned: the decision is durable
	Announced                  // the change reached the in-process fan-out
	WaiterReady                // a parked waiter is taken off its watch, its answer at hand
	WaiterAnswered             // its answer was written on its socket
	Answered                   // the decider's own answer was written
	Steps                      // how many steps there are
)

var names = [Steps]string{"received", "authenticated", "decoded", "checked", "began", "written",
	"committed", "announced", "waiter-ready", "waiter-answered", "answered"}

func (s Step) String() string { return names[s] }

var recorder atomic.Pointer[func(Step)]

// Record calls f at every Mark from now on (nil: none). f must not block; it
// runs on the goroutine that passes the step.
func Record(f func(Step)) {
	if f == nil {
		recorder.Store(nil)
		return
	}
	recorder.Store(&f)
}

// Mark tells the recorder, if any, that step s is passed.
func Mark(s Step) {
	if f := recorder.Load(); f != nil {
		(*f)(s)
	}
}
