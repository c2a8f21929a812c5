package client

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Decision is one decision forwarded to a runtime, pushed or pulled.
// (RequestID, Version) identifies it: a runtime applies each at most once.
type Decision struct {
	RequestID string     `json:"requestId"`
	Version   int        `json:"version"`
	Decision  *string    `json:"decision"`
	Answer    *string    `json:"answer"`
	Note      *string    `json:"note"`
	DecidedAt *time.Time `json:"decided_at,omitempty"` // pull feed only
	Cursor    string     `json:"cursor,omitempty"`     // pull feed only: resume after this one
}

// ErrGone is what a Handler's callback returns when it no longer holds the live
// prompt for the request (the agent's session restarted). The server is told
// 409 and shows the operator "open the session".
var ErrGone = errors.New("gatehouse: the live callback for this request is gone")

// Handler is the http.Handler a runtime serves at {callback_url}/v1/permissions/decide.
// It verifies the server's Ed25519 signature, refuses a replayed delivery and a
// version older than one it accepted, and hands each new decision to OnDecision:
// nil answers 200, ErrGone 409, anything else 500 (the server retries).
// A repeat of the version already accepted (the server sends at least once) is
// answered 200 without calling OnDecision again.
type Handler struct {
	// Keys are the trusted server keys, key id to public key (Client.Keys fetches them).
	Keys       map[string]ed25519.PublicKey
	OnDecision func(ctx context.Context, d Decision) error
	// Window is how far a signature's timestamp may be from now (default 5 minutes).
	Window time.Duration
	// Now is the clock; tests fix it.
	Now func() time.Time

	mu       sync.Mutex
	seen     map[string]time.Time // delivery id -> when it may be forgotten
	accepted map[string]int       // request id -> last version accepted
}

type handlerAnswer struct {
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	Detail string `json:"detail,omitempty"`
}

func answer(w http.ResponseWriter, code int, a handlerAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(a)
}

// ServeHTTP handles one forwarded decision.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		answer(w, http.StatusMethodNotAllowed, handlerAnswer{Error: "method_not_allowed", Detail: "POST a signed decision"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		answer(w, http.StatusBadRequest, handlerAnswer{Error: "invalid_input", Detail: "unreadable body"})
		return
	}
	now, window := h.now(), h.window()
	signed, err := Verify(r.Header, h.Keys, r.Method, signedPath(r), body, now, window)
	if err != nil {
		answer(w, http.StatusUnauthorized, handlerAnswer{Error: "bad_signature", Detail: err.Error()})
		return
	}
	var d Decision
	if err := json.Unmarshal(body, &d); err != nil || d.RequestID == "" || d.Version <= 0 {
		answer(w, http.StatusBadRequest, handlerAnswer{Error: "invalid_input", Detail: "want {requestId, version, decision, answer, note}"})
		return
	}
	prev, status, refusal := h.admit(signed, d, now, window)
	if status != 0 {
		answer(w, status, refusal)
		return
	}
	if err := h.OnDecision(r.Context(), d); err != nil {
		h.undo(d, prev)
		if errors.Is(err, ErrGone) {
			answer(w, http.StatusConflict, handlerAnswer{Error: "callback_gone", Detail: err.Error()})
			return
		}
		answer(w, http.StatusInternalServerError, handlerAnswer{Error: "runtime_error", Detail: err.Error()})
		return
	}
	answer(w, http.StatusOK, handlerAnswer{Status: "accepted"})
}

// admit checks the delivery id and version under the lock and, when the
// decision is new, records both before the callback runs, so two concurrent
// deliveries of one decision hand it over once. A non-zero status is a refusal.
func (h *Handler) admit(s Signed, d Decision, now time.Time, window time.Duration) (prev int, status int, a handlerAnswer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == nil {
		h.seen, h.accepted = map[string]time.Time{}, map[string]int{}
	}
	for id, until := range h.seen {
		if now.After(until) {
			delete(h.seen, id)
		}
	}
	if _, dup := h.seen[s.DeliveryID]; dup {
		return 0, http.StatusUnauthorized, handlerAnswer{Error: "replayed", Detail: "this delivery was already received"}
	}
	// A delivery id is kept until its timestamp leaves the window, after which
	// Verify refuses it anyway.
	h.seen[s.DeliveryID] = s.At.Add(window)
	prev = h.accepted[d.RequestID]
	switch {
	case d.Version < prev:
		return prev, http.StatusConflict, handlerAnswer{Error: "stale_version", Detail: "a newer version of this request was already accepted"}
	case d.Version == prev:
		return prev, http.StatusOK, handlerAnswer{Status: "duplicate"}
	}
	h.accepted[d.RequestID] = d.Version
	return prev, 0, handlerAnswer{}
}

// undo forgets a version whose callback failed, so a retry can hand it over.
func (h *Handler) undo(d Decision, prev int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.accepted[d.RequestID] == d.Version {
		if prev == 0 {
			delete(h.accepted, d.RequestID)
		} else {
			h.accepted[d.RequestID] = prev
		}
	}
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) window() time.Duration {
	if h.Window > 0 {
		return h.Window
	}
	return 5 * time.Minute
}

// signedPath is the path as the server sent it: RequestURI is untouched by
// http.StripPrefix, so the Handler may be mounted under a prefix.
func signedPath(r *http.Request) string {
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && r.RequestURI != "" {
		return u.EscapedPath()
	}
	return r.URL.EscapedPath()
}
