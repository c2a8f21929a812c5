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

// filingLimits is one token bucket per caller: a loop that files in earnest
// is slowed, and one caller's loop never costs another caller anything.
type filingLimits struct {
	every rate.Limit
	burst int
	mu    sync.Mutex
	per   map[string]*rate.Limiter // one per token: bounded by the tokens that exist
}

func newFilingLimits(perSecond float64, burst int) *filingLimits {
	if perSecond <= 0 {
		perSecond = 10
	}
	if burst <= 0 {
		burst = 100
	}
	return &filingLimits{every: rate.Limit(perSecond), burst: burst, per: map[string]*rate.Limiter{}}
}

// take spends one filing of caller's allowance, or says how long to wait.
func (f *filingLimits) take(caller string, now time.Time) (wait time.Duration, ok bool) {
	f.mu.Lock()
	l := f.per[caller]
	if l == nil {
		l = rate.NewLimiter(f.every, f.burst)
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
	d, ok := s.filing.take(p.ID, time.Now())
	if ok {
		return 0, nil
	}
	secs := int(math.Ceil(d.Seconds()))
	return secs, models.Errorf(codeFilingTooFast, "you are filing too fast; wait %d s, then file again (each token may file %s a second, %d at once)",
		secs, strconv.FormatFloat(float64(s.filing.every), 'f', -1, 64), s.filing.burst)
}
