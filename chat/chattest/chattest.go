// Package chattest holds in-process stand-ins for the chat services
// Gatehouse posts to (Slack's Web API, the Telegram Bot API), answering their
// documented shapes and recording every call, and the signature Slack puts on
// a callback. The chat package's tests and the conformance table share them.
package chattest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Call is one call a stand-in received: the API method, its arguments (form
// fields, or a JSON body's members) and when it came.
type Call struct {
	Method string
	Args   map[string]any
	At     time.Time
}

// Str is an argument as a string ("" when absent).
func (c Call) Str(name string) string {
	s, _ := c.Args[name].(string)
	return s
}

// Blocks is the blocks argument of a Slack message call, decoded.
func (c Call) Blocks(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal([]byte(c.Str("blocks")), &out); err != nil {
		t.Fatalf("%s blocks: %v: %q", c.Method, err, c.Str("blocks"))
	}
	return out
}

// recorder keeps the calls of a stand-in by method, and statuses scripted
// to answer the next calls of a method.
type recorder struct {
	mu     sync.Mutex
	calls  map[string]chan Call
	counts map[string]int
	script map[string][]int
}

func newRecorder() recorder {
	return recorder{calls: map[string]chan Call{}, counts: map[string]int{}, script: map[string][]int{}}
}

func (r *recorder) ch(method string) chan Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.calls[method]
	if !ok {
		c = make(chan Call, 1000)
		r.calls[method] = c
	}
	return c
}

// Next waits for the next call of method.
func (r *recorder) Next(t testing.TB, method string) Call {
	t.Helper()
	select {
	case c := <-r.ch(method):
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s call within 10s", method)
		return Call{}
	}
}

// Count is how many calls of method have come.
func (r *recorder) Count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[method]
}

// Fail answers the next calls of method with these statuses.
func (r *recorder) Fail(method string, statuses ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.script[method] = append(r.script[method], statuses...)
}

// take counts a call of method and returns the status scripted for it (0
// for none).
func (r *recorder) take(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[method]++
	status := 0
	if q := r.script[method]; len(q) > 0 {
		status, r.script[method] = q[0], q[1:]
	}
	return status
}

// SignSlack is a Slack callback's headers for body sent at a time, signed
// with a signing secret as Slack signs (v0, HMAC-SHA256).
func SignSlack(body string, at time.Time, secret string) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}
