package web

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"golang.org/x/time/rate"
)

// codeFilingTooFast refuses a filing over the caller's allowance (429).
const codeFilingTooFast = "filing_too_fast"

// The default allowances. An agent token is one agent; a runtime token
// (a gate, a bridge, a middleware) files for every agent behind it, so its
// bucket is ten times larger: a gate taking a burst of a hundred agents' asks
// is not one agent filing in a loop.
const (
	DefaultFilingRate         = 10
	DefaultFilingBurst        = 100
	DefaultRuntimeFilingRate  = 100
	DefaultRuntimeFilingBurst = 1000
)

// allowance is one token bucket's shape.
type allowance struct {
	every rate.Limit
	burst int
}

// filingLimits is one token bucket per caller: a loop that files in earnest
// is slowed, and one caller's loop never costs another caller anything.
type filingLimits struct {
	agent, runtime allowance // runtime tokens get theirs; every other role the agent's
	mu             sync.Mutex
	per            map[string]*rate.Limiter // one per token: bounded by the tokens that exist
}

func newFilingLimits(perSecond float64, burst int, runtimePerSecond float64, runtimeBurst int) *filingLimits {
	return &filingLimits{
		agent:   allowanceOf(perSecond, burst, DefaultFilingRate, DefaultFilingBurst),
		runtime: allowanceOf(runtimePerSecond, runtimeBurst, DefaultRuntimeFilingRate, DefaultRuntimeFilingBurst),
		per:     map[string]*rate.Limiter{},
	}
}

func allowanceOf(perSecond float64, burst int, defRate float64, defBurst int) allowance {
	if perSecond <= 0 {
		perSecond = defRate
	}
	if burst <= 0 {
		burst = defBurst
	}
	return allowance{every: rate.Limit(perSecond), burst: burst}
}

// of is the allowance of a caller's role.
func (f *filingLimits) of(role string) allowance {
	if role == models.RoleRuntime {
		return f.runtime
	}
	return f.agent
}

// take spends one filing of caller's allowance, or says how long to wait.
func (f *filingLimits) take(caller string, a allowance, now time.Time) (wait time.Duration, ok bool) {
	f.mu.Lock()
	l := f.per[caller]
	if l == nil {
		l = rate.NewLimiter(a.every, a.burst)
		f.per[caller] = l
	}
	f.mu.Unlock()
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// allowFiling spends one of p's filings; over the allowance it returns the
// 429 error and how many whole seconds to wait (for Retry-After).
func (s *Server) allowFiling(p models.Principal) (retryAfter int, err error) {
	a := s.filing.of(p.Role)
	d, ok := s.filing.take(p.ID, a, time.Now())
	if ok {
		return 0, nil
	}
	secs := int(math.Ceil(d.Seconds()))
	return secs, models.Errorf(codeFilingTooFast, "you are filing too fast; wait %d s, then file again (each %s token may file %s a second, %d at once)",
		secs, roleOf(p.Role), strconv.FormatFloat(float64(a.every), 'f', -1, 64), a.burst)
}

// roleOf names the allowance's role in the refusal.
func roleOf(role string) string {
	if role == models.RoleRuntime {
		return "runtime"
	}
	return "agent"
}
