package gate

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	"github.com/gatehousehq/gatehouse/client"
)

// writeError answers in Gatehouse's error shape.
func writeError(w http.ResponseWriter, status int, code, detail string) {
	b, _ := json.Marshal(struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}{code, detail})
	writeJSON(w, status, b)
}

func writeTooLarge(w http.ResponseWriter, max int64) {
	writeError(w, http.StatusRequestEntityTooLarge, "body_too_large",
		"The request body is larger than the gate's limit of "+strconv.FormatInt(max, 10)+" bytes. Nothing was sent.")
}

// writeBusy relays Gatehouse's 429 as a 429 the agent can act on: the same
// Retry-After (at least a second), and words saying nothing was sent and the
// identical request may be sent again after the wait.
func writeBusy(w http.ResponseWriter, ce *client.Error, detail string) {
	secs := max(int(math.Ceil(ce.RetryAfter.Seconds())), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, "gatehouse_busy", detail+" (Retry-After: "+strconv.Itoa(secs)+" s)")
}

// handOn answers the agent with a body Gatehouse wrote for it, unchanged.
// Every such answer (approval_pending, approval_denied, approval_expired) is a
// 403: the request was not sent.
func handOn(w http.ResponseWriter, body json.RawMessage) {
	writeJSON(w, http.StatusForbidden, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// body may be shared by racing asks (one filing): never append to it.
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// pendingID reads the pending id out of an agent-facing body, for the log.
func pendingID(body json.RawMessage) string {
	var b struct {
		PendingID string `json:"pending_id"`
	}
	_ = json.Unmarshal(body, &b)
	return b.PendingID
}
