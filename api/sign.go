package api

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of a signed forward. The server and a runtime's Handler share this
// file, so the scheme has one definition (docs/forwarding.md explains it).
const (
	HeaderKeyID      = "Gatehouse-Key-Id"
	HeaderTimestamp  = "Gatehouse-Timestamp"
	HeaderDelivery   = "Gatehouse-Delivery"
	HeaderRuntime    = "Gatehouse-Runtime-Id"
	HeaderSignature  = "Gatehouse-Signature"
	HeaderIdempotent = "Idempotency-Key"
)

// SignatureVersion opens every signed string, so the scheme can change later.
// v2 added the runtime id.
const SignatureVersion = "gatehouse-v2"

// DecidePath is where a runtime's callback receives decisions.
const DecidePath = "/v1/permissions/decide"

// SigningString is what is signed: the scheme, method, path, Unix timestamp,
// delivery id, the id of the runtime the call is for, and hex SHA-256 of the
// body, one per line. The runtime id binds a forward to one runtime, so it
// cannot be replayed to another that trusts the same key.
func SigningString(method, path string, timestamp int64, deliveryID, runtimeID string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.Join([]string{
		SignatureVersion, strings.ToUpper(method), path, strconv.FormatInt(timestamp, 10), deliveryID, runtimeID, hex.EncodeToString(sum[:]),
	}, "\n")
}

// Sign sets the signature headers on h for a call to runtime runtimeID with this
// method, path and body.
func Sign(h http.Header, key ed25519.PrivateKey, keyID, method, path string, at time.Time, deliveryID, runtimeID string, body []byte) {
	ts := at.Unix()
	sig := ed25519.Sign(key, []byte(SigningString(method, path, ts, deliveryID, runtimeID, body)))
	h.Set(HeaderKeyID, keyID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderDelivery, deliveryID)
	h.Set(HeaderRuntime, runtimeID)
	h.Set(HeaderSignature, base64.StdEncoding.EncodeToString(sig))
}

// Errors of Verify.
var (
	ErrUnsigned     = errors.New("the call carries no Gatehouse signature")
	ErrUnknownKey   = errors.New("the call is signed with a key this runtime does not trust")
	ErrBadSignature = errors.New("the signature does not match")
	ErrStale        = errors.New("the signature's timestamp is outside the accepted window")
	ErrWrongRuntime = errors.New("the call is signed for another runtime")
)

// Signed is what Verify learned from a valid signature.
type Signed struct {
	KeyID      string
	DeliveryID string
	RuntimeID  string
	At         time.Time
}

// Verify checks the signature headers of a call against trusted keys (key id to
// public key), that it was signed for runtimeID (the verifier's own id), and
// that its timestamp is within window of now.
func Verify(h http.Header, keys map[string]ed25519.PublicKey, runtimeID, method, path string, body []byte, now time.Time, window time.Duration) (Signed, error) {
	keyID, tsText, delivery, sigText := h.Get(HeaderKeyID), h.Get(HeaderTimestamp), h.Get(HeaderDelivery), h.Get(HeaderSignature)
	forRuntime := h.Get(HeaderRuntime)
	if keyID == "" || tsText == "" || delivery == "" || sigText == "" || forRuntime == "" {
		return Signed{}, ErrUnsigned
	}
	pub, ok := keys[keyID]
	if !ok {
		return Signed{}, ErrUnknownKey
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return Signed{}, ErrBadSignature
	}
	sig, err := base64.StdEncoding.DecodeString(sigText)
	if err != nil || !ed25519.Verify(pub, []byte(SigningString(method, path, ts, delivery, forRuntime, body)), sig) {
		return Signed{}, ErrBadSignature
	}
	if forRuntime != runtimeID {
		return Signed{}, ErrWrongRuntime
	}
	at := time.Unix(ts, 0)
	if d := now.Sub(at); d > window || d < -window {
		return Signed{}, ErrStale
	}
	return Signed{KeyID: keyID, DeliveryID: delivery, RuntimeID: forRuntime, At: at}, nil
}
