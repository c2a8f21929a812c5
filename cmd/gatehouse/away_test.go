//go:build !agent

package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestAwayCommand: `gatehouse away` sets the operator's own availability over
// HTTP with their token; an agent's token is refused and changes nothing.
func TestAwayCommand(t *testing.T) {
	t.Setenv("GATEHOUSE_URL", "")
	t.Setenv("GATEHOUSE_TOKEN", "")
	ts := newTestServer(t)
	op := ts.Operator.Token
	as := func(token string, args ...string) []string {
		return append(append([]string{"away"}, args...), "--url", ts.URL, "--token", token)
	}
	ctx := context.Background()

	t.Run("away on until a time, status, off", func(t *testing.T) {
		code, out, stderr := gatehouse(t, as(op, "on", "--until", "2h")...)
		if code != 0 || !strings.HasPrefix(out, "alice: away until ") {
			t.Fatalf("exit %d %q %q", code, out, stderr)
		}
		a, _ := ts.Store.GetAvailability(ctx, "alice")
		if !a.Away || a.AwayUntil == nil || time.Until(*a.AwayUntil) < 119*time.Minute {
			t.Fatalf("%+v", a)
		}
		if code, out, _ := gatehouse(t, as(op, "status")...); code != 0 || !strings.Contains(out, "away until") {
			t.Fatalf("status: %d %q", code, out)
		}
		if code, out, _ := gatehouse(t, as(op, "off")...); code != 0 || out != "alice: available\n" {
			t.Fatalf("off: %d %q", code, out)
		}
	})

	t.Run("quiet hours", func(t *testing.T) {
		code, out, stderr := gatehouse(t, as(op, "quiet", "22:00", "07:00", "Europe/Berlin")...)
		if code != 0 || !strings.Contains(out, "quiet hours: 22:00–07:00 Europe/Berlin") {
			t.Fatalf("exit %d %q %q", code, out, stderr)
		}
		if code, _, stderr := gatehouse(t, as(op, "quiet", "22:00", "07:00", "Nowhere/Else")...); code != 1 || !strings.Contains(stderr, "time zone") {
			t.Fatalf("a bad zone: %d %q", code, stderr)
		}
		if code, out, _ := gatehouse(t, as(op, "quiet", "off")...); code != 0 || strings.Contains(out, "quiet") {
			t.Fatalf("quiet off: %d %q", code, out)
		}
	})

	t.Run("an agent's token is refused", func(t *testing.T) {
		code, _, stderr := gatehouse(t, as(ts.Agent, "on")...)
		if code != 1 || !strings.Contains(stderr, "operator token") {
			t.Fatalf("exit %d %q", code, stderr)
		}
		if a, _ := ts.Store.GetAvailability(ctx, "alice"); a.Away {
			t.Fatal("alice is away")
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		for _, args := range [][]string{as(op), as(op, "maybe"), as(op, "off", "--until", "1h"), as(op, "on", "--until", "tomorrow")} {
			if code, _, _ := gatehouse(t, args...); code != 2 {
				t.Fatalf("%v: exit %d", args, code)
			}
		}
	})
}
