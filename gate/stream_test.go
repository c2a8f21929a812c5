package gate_test

import (
	"bufio"
	"context"
	"net/http"
	"testing"
	"time"
)

// TestStreamingPassesThrough: the agent reads the upstream's first chunk
// while the upstream is still holding back its last one.
func TestStreamingPassesThrough(t *testing.T) {
	e := newEnv(t)
	firstRead := make(chan struct{})
	lastWritten := make(chan struct{})
	e.up.handler = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write([]byte("data: first\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-firstRead:
		case <-time.After(guard):
			// Fail in the agent's read below, which never sees "last".
			return
		}
		_, _ = w.Write([]byte("data: last\n\n"))
		close(lastWritten)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.gate.URL+"/repos/acme/widgets/events", nil)
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	first, err := lines.ReadString('\n')
	if err != nil || first != "data: first\n" {
		t.Fatalf("first chunk: %q %v", first, err)
	}
	select {
	case <-lastWritten:
		t.Fatal("the last chunk was written before the agent read the first")
	default:
	}
	close(firstRead)
	rest := ""
	for {
		l, err := lines.ReadString('\n')
		rest += l
		if err != nil {
			break
		}
	}
	if rest != "\ndata: last\n\n" {
		t.Fatalf("the rest: %q", rest)
	}
}
