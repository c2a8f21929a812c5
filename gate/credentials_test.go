package gate_test

import (
	"strings"
	"testing"
)

func TestCredentialSwap(t *testing.T) {
	e := newEnv(t, func(c *gateConfig) { c.Strip = []string{"X-Agent-Secret", "cookie"} })
	a := e.send(t, "GET", "/user", "", "X-Agent-Secret", "s3cret", "Cookie", "session=agent", "Accept", "application/json")
	if a.Status != 200 {
		t.Fatalf("read: %d %s", a.Status, a.Body)
	}
	h := e.up.Hits()[0].Header
	t.Run("upstream sees the gate's credential", func(t *testing.T) {
		if got := h.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+upstreamSecret {
			t.Fatalf("Authorization upstream: %q", got)
		}
	})
	t.Run("never the agent's", func(t *testing.T) {
		for k, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, e.gh.agent) {
					t.Fatalf("the agent's token reached the upstream in %s", k)
				}
			}
		}
	})
	t.Run("strip removes the named headers", func(t *testing.T) {
		if h.Get("X-Agent-Secret") != "" || h.Get("Cookie") != "" {
			t.Fatalf("stripped headers reached the upstream: %v", h)
		}
		if h.Get("Accept") != "application/json" {
			t.Fatalf("an ordinary header was dropped: %v", h)
		}
	})
	t.Run("no forwarding headers name the agent", func(t *testing.T) {
		for _, k := range []string{"X-Forwarded-For", "X-Forwarded-Host", "Forwarded"} {
			if h.Get(k) != "" {
				t.Fatalf("%s reached the upstream: %q", k, h.Get(k))
			}
		}
	})
}
