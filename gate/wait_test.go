package gate_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/gate"
)

// TestAgentWaitsThroughTheGate is the flow as the agent lives it: a 403 that
// names a wait URL on the gate, a long-poll there that answers when the
// operator decides, then the identical request once.
func TestAgentWaitsThroughTheGate(t *testing.T) {
	e := newEnv(t)
	a := e.send(t, "PUT", mergePath, mergeBody)
	id, _ := a.JSON(t)["pending_id"].(string)
	wait := a.Header.Get(gate.WaitHeader)
	if a.Status != 403 || wait != e.gate.URL+gate.WaitPrefix+id+"/wait" {
		t.Fatalf("ask: %d %s=%q %s", a.Status, gate.WaitHeader, wait, a.Body)
	}
	path := strings.TrimPrefix(wait, e.gate.URL)
	t.Run("read without a token", func(t *testing.T) {
		st := e.send(t, "GET", strings.TrimSuffix(path, "/wait"), "")
		if m := st.JSON(t); st.Status != 200 || m["status"] != "pending" || m["pending_id"] != id {
			t.Fatalf("status: %d %s", st.Status, st.Body)
		}
	})
	t.Run("only reads are served there", func(t *testing.T) {
		for _, bad := range []struct{ method, path string }{
			{"POST", gate.WaitPrefix + "claim"}, {"POST", path}, {"GET", gate.WaitPrefix + "../requests"},
			{"GET", gate.WaitPrefix + "Bad-Id/wait"}, {"GET", path + "?timeout=301"},
		} {
			if a := e.send(t, bad.method, bad.path, ""); a.Status != 404 && a.Status != 400 {
				t.Errorf("%s %s: %d %s", bad.method, bad.path, a.Status, a.Body)
			}
		}
		if len(e.up.Hits()) != 0 {
			t.Fatal("a wait path reached the upstream")
		}
	})
	t.Run("the wait answers the decision", func(t *testing.T) {
		answered := make(chan answer, 1)
		go func() { answered <- e.send(t, "GET", path+"?timeout=60", "") }()
		select {
		case <-e.gh.parked:
		case <-time.After(guard):
			t.Fatal("the wait never parked at Gatehouse")
		}
		e.gh.decide(t, e.grant(t, id).RequestID, "approve")
		select {
		case a := <-answered:
			var st struct {
				Status   string `json:"status"`
				TimedOut bool   `json:"timed_out"`
			}
			if err := json.Unmarshal(a.Body, &st); err != nil || a.Status != 200 || st.Status != "approved" || st.TimedOut {
				t.Fatalf("wait: %d %s", a.Status, a.Body)
			}
		case <-time.After(guard):
			t.Fatal("the wait did not answer the decision")
		}
	})
	if a := e.send(t, "PUT", mergePath, mergeBody); a.Status != 200 || len(e.up.Hits()) != 1 {
		t.Fatalf("the retry: %d %s, upstream hits %d", a.Status, a.Body, len(e.up.Hits()))
	}
}
