package acp

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/gatehousehq/gatehouse/internal/rpcid"
)

// ACP methods the bridge reads.
const (
	MethodInitialize        = "initialize"
	MethodSessionNew        = "session/new"
	MethodSessionPrompt     = "session/prompt"
	MethodSessionCancel     = "session/cancel"
	MethodSessionUpdate     = "session/update"
	MethodRequestPermission = "session/request_permission"
	// MethodCancelRequest withdraws a request the sender issued; the bridge
	// sends it to the editor when the operator answered first.
	MethodCancelRequest = "$/cancel_request"
)

// envelope is the part of a JSON-RPC message the bridge reads: a request has
// an id and a method, a notification a method alone, a response an id alone.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m *envelope) isRequest() bool  { return m.Method != "" && hasID(m.ID) }
func (m *envelope) isResponse() bool { return m.Method == "" && hasID(m.ID) }

func hasID(id json.RawMessage) bool { return len(id) > 0 && string(id) != "null" }

// idKey is a JSON-RPC id as a map key, by its value: 1 and 1.0 are one
// request, 0 and "0" two.
func idKey(id json.RawMessage) string { return rpcid.Key(id) }

// lineWriter writes whole lines, one at a time, from any goroutine.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) write(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(line)
	return err
}

// send marshals one message and writes it as a line.
func (l *lineWriter) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return l.write(append(b, '\n'))
}

// response is a JSON-RPC result.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

// notification is a JSON-RPC notification.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// Outcome is the result of session/request_permission.
type Outcome struct {
	Outcome  string `json:"outcome"` // "selected" or "cancelled"
	OptionID string `json:"optionId,omitempty"`
}

func permissionResult(o Outcome) any {
	return struct {
		Outcome Outcome `json:"outcome"`
	}{o}
}
