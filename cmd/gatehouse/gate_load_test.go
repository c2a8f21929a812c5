//go:build !agent

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"
)

// TestGateManyAsksDefaultFlags: a gate files for every agent behind it with
// one runtime token. With serve's and gate's default flags, two bursts of 100
// concurrent asks through one gate are each answered approval_pending; none
// is a 502 because the runtime token met the filing allowance of one agent.
func TestGateManyAsksDefaultFlags(t *testing.T) {
	base, _, database := startServe(t)
	code, out := runCmd(t, "token", "create", "--role", "runtime", "--name", "gate", "--database", database)
	if code != 0 {
		t.Fatalf("token create: %d", code)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("an asked request reached the upstream: %s %s", r.Method, r.URL)
	}))
	t.Cleanup(up.Close)
	t.Setenv("GATEHOUSE_URL", base)
	t.Setenv("GATEHOUSE_TOKEN", strings.TrimSpace(out))
	ctx, cancel := context.WithCancel(context.Background())
	stdout := newLines()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"gate", "--listen", "127.0.0.1:0", "--upstream", up.URL, "--sandbox", "sb-load"}, nil, stdout, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if code := testkit.Recv(t, done, "the gate to stop"); code != 0 {
			t.Errorf("gate exited %d", code)
		}
	})
	addr := strings.Fields(strings.TrimPrefix(nextLine(t, stdout, "listening line"), "gatehouse gate listening on "))[0]
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	t.Cleanup(hc.CloseIdleConnections)

	const n = 100
	for wave := range 2 {
		statuses := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				path := fmt.Sprintf("/repos/acme/widgets/pulls/%d/merge", wave*n+i+1)
				req, _ := http.NewRequest("PUT", addr+path, strings.NewReader(`{"merge_method":"squash"}`))
				resp, err := hc.Do(req)
				if err != nil {
					statuses[i] = err.Error()
					return
				}
				defer resp.Body.Close()
				var m map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&m)
				statuses[i] = fmt.Sprintf("%d %v", resp.StatusCode, m["error"])
			})
		}
		testkit.Wait(t, &wg, "the concurrent asks to finish")
		bad := map[string]int{}
		for _, s := range statuses {
			if s != "403 approval_pending" {
				bad[s]++
			}
		}
		if len(bad) > 0 {
			t.Fatalf("wave %d of %d concurrent asks: answers other than 403 approval_pending: %v", wave+1, n, bad)
		}
	}
}
