package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"github.com/gatehousehq/gatehouse/web"
	"github.com/gatehousehq/gatehouse/web/webtest"
)

// within receives from ch or fails the test after a cap (not a timing assertion).
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// An agent that files in a loop is slowed with words it can act on; another
// token is not (issue 15, finding 6).
func TestFilingRateLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{FilingRate: 0.001, FilingBurst: 3})
		ag, other := e.Token(models.RoleAgent, "loop"), e.Token(models.RoleAgent, "ci")
		for range 3 {
			e.File(ag, nil)
		}
		t.Run("over the burst: 429 with Retry-After and words", func(t *testing.T) {
			r0, _ := counts(t, e.Store)
			req, _ := http.NewRequest("POST", e.URL+"/v1/requests", strings.NewReader(`{"title":"again","options":[{"id":"ok","label":"OK"}]}`))
			req.Header.Set("Authorization", "Bearer "+ag)
			res, err := e.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			m := webtest.JSON(t, body)
			detail, _ := m["detail"].(string)
			if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || m["error"] != "filing_too_fast" ||
				!strings.Contains(detail, "you are filing too fast; wait") {
				t.Fatalf("%d Retry-After=%q %s", res.StatusCode, res.Header.Get("Retry-After"), body)
			}
			if r1, _ := counts(t, e.Store); r1 != r0 {
				t.Fatalf("a refused filing wrote a request")
			}
		})
		t.Run("over the burst through MCP too", func(t *testing.T) {
			status, body := mcpPost(t, e, ag, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notify_operator","arguments":{"message":"x"}}}`)
			if status != http.StatusOK || !strings.Contains(body, "you are filing too fast") {
				t.Fatalf("%d %q", status, body)
			}
		})
		t.Run("another token still files", func(t *testing.T) {
			e.File(other, nil)
		})
	})
}

func mcpPost(t *testing.T, e *webtest.Env, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.URL+"/mcp", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestMCPBatchCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		e := webtest.New(t, dialect, web.Config{})
		ag := e.Token(models.RoleAgent, "a")
		calls := make([]string, 300)
		for i := range calls {
			calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"notify_operator","arguments":{"message":"spam %d"}}}`, i+1, i)
		}
		r0, _ := counts(t, e.Store)
		status, body := mcpPost(t, e, ag, "["+strings.Join(calls, ",")+"]")
		if !strings.Contains(body, `"error"`) || !strings.Contains(body, "batch") {
			t.Fatalf("a 300-call batch: %d %s", status, body)
		}
		if r1, _ := counts(t, e.Store); r1 != r0 {
			t.Fatalf("a refused batch filed %d requests", r1-r0)
		}
	})
}

// Agents filling the waiter pool leave room for the operator's own waits.
func TestWaitersReservedForOperators(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		started := make(chan struct{}, 100)
		e := webtest.New(t, dialect, web.Config{MaxWaiters: 10, MaxWaitersPerCaller: 100, OnWaitStart: func() { started <- struct{}{} }})
		op := e.Token(models.RoleOperator, "op")
		ag := e.Token(models.RoleAgent, "a")
		id := e.File(ag, nil)["id"].(string)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		held := 0
		for ; held < 10; held++ {
			w := startWait(t, e, ctx, id, ag, "60")
			select {
			case <-started:
				continue
			case got := <-w:
				if got.status != http.StatusTooManyRequests {
					t.Fatalf("agent wait %d: %+v", held+1, got)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("an agent wait neither started nor was refused")
			}
			break
		}
		if held == 0 || held >= 10 {
			t.Fatalf("agents held %d of 10 waits; want some, but not all", held)
		}
		w := startWait(t, e, ctx, id, op, "60")
		select {
		case <-started:
		case got := <-w:
			t.Fatalf("the operator's wait was refused with agents holding %d: %+v", held, got)
		case <-time.After(20 * time.Second):
			t.Fatal("the operator's wait neither started nor was refused")
		}
		cancel()
		within(t, w, "the operator's wait to end")
	})
}
