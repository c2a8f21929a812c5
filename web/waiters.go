package web

import (
	"strconv"
	"sync"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/labstack/echo/v4"
)

// waiterCaps bounds concurrent long-polls in all and per caller. A tenth of
// the total is the operators' alone, so agents and runtimes filling the pool
// never lock a person out of their own waits.
type waiterCaps struct {
	mu      sync.Mutex
	max     int
	reserve int // of max, for operators only
	perMax  int
	total   int
	per     map[string]int
}

func newWaiterCaps(max, perMax int) *waiterCaps {
	reserve := max / 10
	if reserve == 0 && max > 1 {
		reserve = 1
	}
	return &waiterCaps{max: max, reserve: reserve, perMax: perMax, per: map[string]int{}}
}

// RetryAfterSeconds is what a refused waiter is told to wait.
const RetryAfterSeconds = 5

// acquire takes a waiter slot for caller, or says why not.
func (w *waiterCaps) acquire(caller string, operator bool) (release func(), err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !operator && w.total >= w.max-w.reserve {
		return nil, models.Errorf(codeTooManyWaiters, "the server holds its maximum of %d waits for agents and runtimes; call again in %d seconds", w.max-w.reserve, RetryAfterSeconds)
	}
	if w.total >= w.max {
		return nil, models.Errorf(codeTooManyWaiters, "the server holds its maximum of %d waits; call again in %d seconds", w.max, RetryAfterSeconds)
	}
	if w.per[caller] >= w.perMax {
		return nil, models.Errorf(codeTooManyWaiters, "you already hold %d waits, the most one caller may; finish one or call again in %d seconds", w.perMax, RetryAfterSeconds)
	}
	w.total++
	w.per[caller]++
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.total--
			if w.per[caller]--; w.per[caller] == 0 {
				delete(w.per, caller)
			}
		})
	}, nil
}

// count returns how many waits are held.
func (w *waiterCaps) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// AcquireWaiter takes a waiter slot for the caller of c (other long-polls, such
// as the pending and runtime feeds, share the caps). On refusal it sets
// Retry-After and returns the 429 error.
func (s *Server) AcquireWaiter(c echo.Context) (waitSlot, error) {
	slot, err := s.takeWaitSlot(Principal(c))
	if err != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	return slot, err
}

// takeWaitSlot takes a waiter slot for p (HTTP waits and MCP's).
func (s *Server) takeWaitSlot(p models.Principal) (waitSlot, error) {
	free, err := s.waiters.acquire(p.ID, p.Role == models.RoleOperator)
	if err != nil {
		return waitSlot{}, err
	}
	return waitSlot{free: free, ended: s.cfg.OnWaitEnd}, nil
}

// waitSlot is a held waiter slot.
type waitSlot struct {
	free  func() // gives the slot back; a second call does nothing
	ended func() // OnWaitEnd, or nil
}

// release gives the slot back (if free has not) and reports the wait over.
// A wait whose answer is written by the server after the handler returns
// (a parked one) calls free before the answer goes out: a client that holds
// the answer may wait again at once, and must not find its slot still taken.
func (w waitSlot) release() {
	w.free()
	if w.ended != nil {
		w.ended()
	}
}

// Waiters is how many long-polls the server holds.
func (s *Server) Waiters() int { return s.waiters.count() }

// Parked is how many request waits are parked (a subset of Waiters).
func (s *Server) Parked() int { return s.parked.Count() }
