package hookanswer

import (
	"encoding/json"
	"fmt"
)

// eventName is a hook input's hook_event_name; false when the input is not a
// JSON object.
func eventName(body []byte) (string, bool) {
	var in struct {
		HookEventName string `json:"hook_event_name"`
	}
	if json.Unmarshal(body, &in) != nil {
		return "", false
	}
	return in.HookEventName, true
}

// parseSession reads a session event's hook input as T, whose session id is
// session's; an input that names no session is refused.
func parseSession[T any](body []byte, session func(*T) string) (*T, error) {
	var in T
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("hook input is not JSON: %w", err)
	}
	if session(&in) == "" {
		return nil, fmt.Errorf("hook input has no session_id")
	}
	return &in, nil
}
