package lazyregexp_test

import (
	"fmt"
	"testing"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

func TestRegexp(t *testing.T) {
	t.Run("matches as regexp does", func(t *testing.T) {
		re := lazyregexp.New(`^[a-z][a-z0-9_]{0,63}$`)
		for s, want := range map[string]bool{"once": true, "allow_2": true, "": false, "Once": false, "a-b": false} {
			if got := re.MatchString(s); got != want {
				t.Errorf("MatchString(%q) = %v, want %v", s, got, want)
			}
		}
	})
	t.Run("prints its source", func(t *testing.T) {
		if got := fmt.Sprintf("must match %s", lazyregexp.New(`^[A-Z]+$`)); got != "must match ^[A-Z]+$" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("a bad pattern panics at first use, not at New", func(t *testing.T) {
		re := lazyregexp.New(`(`)
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		re.MatchString("x")
	})
}
