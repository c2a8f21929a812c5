package web

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// Failed logins allowed per client address and per credential presented: a
// burst, then one per interval. Each table keeps at most maxLimiters keys.
const (
	loginBurst    = 10
	loginInterval = 6 * time.Second
	maxLimiters   = 10000
)

// loginLimiter counts failed logins twice: per client address and per
// credential presented. Neither count ever stands between a right credential
// and its login: the secrets are 256 random bits, so no limit is what keeps
// them from being guessed, and a limit that refused the right token would let
// an agent on the operator's machine lock the operator out with ten bad ones.
// What the counts do is answer the failures of a noisy address, or of a
// credential that keeps failing, with 429 and Retry-After instead of 401, and
// keep a credential that failed too often off the store.
type loginLimiter struct {
	addrs failures
	creds failures
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{addrs: failures{byKey: map[string]*rate.Limiter{}}, creds: failures{byKey: map[string]*rate.Limiter{}}}
}

// failures counts failures per key in a bounded table.
type failures struct {
	mu    sync.Mutex
	byKey map[string]*rate.Limiter
}

// over reports whether key has no failure left in its budget, and how long
// until it has one.
func (f *failures) over(key string) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lim := f.byKey[key]
	if lim == nil {
		return 0, false
	}
	if t := lim.Tokens(); t < 1 {
		return time.Duration((1-t)*float64(loginInterval)) + time.Second, true
	}
	return 0, false
}

// fail counts a failure against key; false when its budget was already spent.
func (f *failures) fail(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	lim := f.byKey[key]
	if lim == nil {
		if len(f.byKey) >= maxLimiters {
			f.shrink()
		}
		lim = rate.NewLimiter(rate.Every(loginInterval), loginBurst)
		f.byKey[key] = lim
	}
	return lim.Allow()
}

// shrink makes room for an eighth of the table, so that the sweep's cost is
// spread over that many new keys. It forgets first the keys whose budget is
// whole again (nothing against them), then keys with budget left, and only
// then throttled ones (map order): a flood of fresh keys, one failure each,
// does not wash out a key that spent its budget, and forgetting a key only
// ever gives it its budget back.
func (f *failures) shrink() {
	keep := maxLimiters - maxLimiters/8
	for _, drop := range []func(*rate.Limiter) bool{
		func(l *rate.Limiter) bool { return l.Tokens() >= loginBurst },
		func(l *rate.Limiter) bool { return l.Tokens() >= 1 },
		func(*rate.Limiter) bool { return true },
	} {
		for k, v := range f.byKey {
			if len(f.byKey) <= keep {
				return
			}
			if drop(v) {
				delete(f.byKey, k)
			}
		}
	}
}

// loginCredential is the key a login's credential is counted under: a hash
// (the table never holds a secret someone mistyped), of the one-time link's
// ticket on GET and of the form's token on POST, kept apart.
func loginCredential(c echo.Context) string {
	var sum [sha256.Size]byte
	if c.Request().Method == http.MethodGet {
		sum = sha256.Sum256([]byte("link\x00" + c.QueryParam("token")))
	} else {
		sum = sha256.Sum256([]byte("form\x00" + c.FormValue("token")))
	}
	return string(sum[:16])
}
