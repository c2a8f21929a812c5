// Package push tells the operator's phone that an agent waits: APNs for the
// app, Web Push for the page added to a home screen. What leaves the server is
// generic text, an opaque request id and the inbox URL; never what an agent wrote.
package push

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kinds of notification.
const (
	TypeAlert = "alert" // an interrupting request (or a burst of them) is open
	TypeBadge = "badge" // the open count changed; no sound, no text
	TypeClear = "clear" // a request left open: remove its notification
	TypeTest  = "test"  // `gatehouse push test`
)

// The only words a push ever carries.
const (
	Title      = "Gatehouse"
	BodyOne    = "An agent needs your decision"
	BodyWaits  = "An agent is waiting for you"
	bodyMany   = "%d agents need your decision"
	BodyTest   = "Test notification: push reaches this device"
	ThreadID   = "gatehouse-requests"
	maxIDsSent = 20 // a coalesced alert names at most this many ids
)

// Message is one notification before it is shaped for a service. It holds ids,
// counts and URLs only, so no agent text can reach a payload.
type Message struct {
	Type       string
	RequestID  string   // the request it is about (the first of a burst)
	RequestIDs []string // every request of a coalesced alert
	Version    int      // the request's version when the push was planned
	Count      int      // requests the alert covers
	Badge      int      // open requests; -1 when unknown
	URL        string   // where a tap opens: BASE_URL/requests/{id}, or the inbox
	Waiting    bool     // an alert for a waiting item (or review) still open after the attention grace
}

// Body is the alert text.
func (m Message) Body() string {
	switch {
	case m.Type == TypeTest:
		return BodyTest
	case m.Waiting:
		return BodyWaits
	case m.Count > 1:
		return fmt.Sprintf(bodyMany, m.Count)
	}
	return BodyOne
}

// RequestURL is the page of one request under base.
func RequestURL(base, id string) string {
	return strings.TrimRight(base, "/") + "/requests/" + id
}

// InboxURL is the inbox under base.
func InboxURL(base string) string { return strings.TrimRight(base, "/") + "/" }

// webPayload is what the service worker receives.
type webPayload struct {
	Type       string   `json:"type"`
	Title      string   `json:"title,omitempty"`
	Body       string   `json:"body,omitempty"`
	URL        string   `json:"url,omitempty"`
	RequestID  string   `json:"request_id,omitempty"`
	RequestIDs []string `json:"request_ids,omitempty"`
	Badge      *int     `json:"badge,omitempty"`
	Resolved   bool     `json:"resolved,omitempty"`
}

// WebPayload is the JSON a Web Push carries: {type, title, body, url,
// request_id, request_ids?, badge?, resolved?}.
func WebPayload(m Message) []byte {
	p := webPayload{Type: m.Type, RequestID: m.RequestID, URL: m.URL}
	if m.Badge >= 0 && m.Type != TypeClear {
		b := m.Badge
		p.Badge = &b
	}
	switch m.Type {
	case TypeAlert, TypeTest:
		p.Title, p.Body = Title, m.Body()
		if len(m.RequestIDs) > 1 {
			p.RequestIDs = capIDs(m.RequestIDs)
		}
	case TypeClear:
		p.Resolved = true
	}
	b, _ := json.Marshal(p) // only strings and ints: cannot fail
	return b
}

func capIDs(ids []string) []string {
	if len(ids) > maxIDsSent {
		return ids[:maxIDsSent]
	}
	return ids
}
