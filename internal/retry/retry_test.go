package retry_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/retry"
)

func TestAfter(t *testing.T) {
	t.Run("doubles from the first pause, jittered by half either way", func(t *testing.T) {
		for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second} {
			for range 50 {
				if d := retry.After(time.Second, time.Minute, n); d < want/2 || d > want*3/2 {
					t.Fatalf("attempt %d: %s, want within 50%% of %s", n, d, want)
				}
			}
		}
	})
	t.Run("is capped", func(t *testing.T) {
		for range 50 {
			if d := retry.After(time.Second, 4*time.Second, 30); d > 6*time.Second {
				t.Fatalf("%s above the cap and its jitter", d)
			}
		}
	})
}
