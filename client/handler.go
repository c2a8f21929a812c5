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

	"github.com/gatehousehq/gatehouse/api"
)

// ErrGone is what a Handler's callback returns when it no longer holds the live
// prompt for the request (the agent's session restarted). The server is told
// 409 and shows the operator "open the session".
var ErrGone = errors.New("gatehouse: the live callback for this request is gone")

// Handler is the http.Handler a runtime serves at {callback_url}/v1/permissions/decide.
// It verifies the server's Ed25519 signature and that the call was signed for
// this runtime, refuses a replayed delivery and a version older than one it
// accepted, and hands each new decision to OnDecision: nil answers 200, ErrGone
// 409, anything else 500 (the server retries). A repeat of the version already
// accepted (the server sends at least once) is answered 200 without calling
// OnDecision again.
type Handler struct {
	// Keys are the trusted server keys, key id to public key (Client.Keys fetches them).
	Keys map[string]ed25519.PublicKey
	// RuntimeID is this runtime's id (from RegisterRuntime). Required: a call
	// signed for any other runtime is refused, so a forward captured at one
	// runtime cannot be replayed to another.
	RuntimeID  string
	OnDecision func(ctx context.Context, d api.Decision) error
	// Filed, when set, is the action_digest the runtime's filing of requestID
	// answered (ok false: it filed no such request). A forward whose
	// decided_digest differs was decided on something else than the runtime
	// filed (an edit, another filer's request): it is refused with 409
	// digest_mismatch and never handed to OnDecision.
	Filed func(requestID string) (digest string, ok bool)
	// Window is how far a signature's timestamp may be from now (default 5 minutes).
	Window time.Duration
	// Remember is how long the version accepted for a request is kept, for
	// refusing an older one and answering a repeat without handing it over again
	// (default 24 hours, never less than Window). After that the request is
	// forgotten, so memory stays bounded by the decisions of one such period.
	Remember time.Duration
	// Now is the clock; tests fix it.
	Now func() time.Time
	// Replay, if set, keeps the replay state across restarts (a ReplayFile);
	// without it a restarted runtime accepts a forward captured before, inside
	// the window.
	Replay ReplayStore

	mu       sync.Mutex
	loaded   bool
	seen     forgetful[struct{}] // delivery ids, until their timestamp leaves the window
	accepted forgetful[int]      // request id -> last version accepted
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
	signed, err := api.Verify(r.Header, h.Keys, h.RuntimeID, r.Method, signedPath(r), body, now, window)
	if err != nil {
		answer(w, http.StatusUnauthorized, handlerAnswer{Error: "bad_signature", Detail: err.Error()})
		return
	}
	var d api.Decision
	if err := json.Unmarshal(body, &d); err != nil || d.RequestID == "" || d.Version <= 0 {
		answer(w, http.StatusBadRequest, handlerAnswer{Error: "invalid_input", Detail: "want {requestId, version, decision, answer, note}"})
		return
	}
	if h.Filed != nil {
		if want, ok := h.Filed(d.RequestID); !ok || want == "" || d.DecidedDigest != want {
			answer(w, http.StatusConflict, handlerAnswer{Error: "digest_mismatch", Detail: "this decision was not made on what this runtime filed"})
			return
		}
	}
	prev, status, refusal := h.admit(signed, d, now, window)
	if status != 0 {
		answer(w, status, refusal)
		return
	}
	if err := h.OnDecision(r.Context(), d); err != nil {
		h.undo(d, prev, now, window)
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
func (h *Handler) admit(s api.Signed, d api.Decision, now time.Time, window time.Duration) (prev int, status int, a handlerAnswer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.restore(now); err != nil {
		return 0, http.StatusInternalServerError, handlerAnswer{Error: "runtime_error", Detail: "replay state: " + err.Error()}
	}
	h.seen.forget(now)
	h.accepted.forget(now)
	if _, dup := h.seen.get(s.DeliveryID); dup {
		return 0, http.StatusUnauthorized, handlerAnswer{Error: "replayed", Detail: "this delivery was already received"}
	}
	// A delivery id is kept until its timestamp leaves the window, after which
	// Verify refuses it anyway.
	h.seen.put(s.DeliveryID, struct{}{}, s.At.Add(window))
	prev, _ = h.accepted.get(d.RequestID)
	switch {
	case d.Version < prev:
		status, a = http.StatusConflict, handlerAnswer{Error: "stale_version", Detail: "a newer version of this request was already accepted"}
	case d.Version == prev:
		status, a = http.StatusOK, handlerAnswer{Status: "duplicate"}
	default:
		h.accepted.put(d.RequestID, d.Version, now.Add(h.remember(window)))
	}
	if err := h.persist(); err != nil {
		// Not kept, so not accepted: the server retries with a new delivery id.
		h.seen.del(s.DeliveryID)
		if status == 0 {
			h.undoLocked(d, prev, now, window)
		}
		return prev, http.StatusInternalServerError, handlerAnswer{Error: "runtime_error", Detail: "replay state: " + err.Error()}
	}
	return prev, status, a
}

// undo forgets a version whose callback failed, so a retry can hand it over.
func (h *Handler) undo(d api.Decision, prev int, now time.Time, window time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.undoLocked(d, prev, now, window)
	_ = h.persist() // at worst the retry is answered "duplicate" after a restart
}

func (h *Handler) undoLocked(d api.Decision, prev int, now time.Time, window time.Duration) {
	if v, ok := h.accepted.get(d.RequestID); ok && v == d.Version {
		if prev == 0 {
			h.accepted.del(d.RequestID)
		} else {
			h.accepted.put(d.RequestID, prev, now.Add(h.remember(window)))
		}
	}
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// remember is never shorter than the signature window, inside which a delivery
// may still arrive.
func (h *Handler) remember(window time.Duration) time.Duration {
	if h.Remember > 0 {
		return max(h.Remember, window)
	}
	return max(24*time.Hour, window)
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
