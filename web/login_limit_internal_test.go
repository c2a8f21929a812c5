package web

import (
	"fmt"
	"testing"
)

// TestLoginLimiterMemory: a flood of keys that each fail once (a new wrong
// token per login) never makes the table hold more than maxLimiters keys, and
// does not wash out a key that spent its budget.
func TestLoginLimiterMemory(t *testing.T) {
	l := newLoginLimiter()
	for range loginBurst {
		l.creds.fail("stale")
	}
	if _, over := l.creds.over("stale"); !over {
		t.Fatal("a key that failed its whole budget is not over it")
	}
	for i := range 5 * maxLimiters {
		l.creds.fail(fmt.Sprint("guess-", i))
		if n := len(l.creds.byKey); n > maxLimiters {
			t.Fatalf("after %d keys the table holds %d, more than %d", i+1, n, maxLimiters)
		}
	}
	if _, over := l.creds.over("stale"); !over {
		t.Fatal("the flood washed out the key that spent its budget")
	}
}
