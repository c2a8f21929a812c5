package api

import "time"

// Device is a push device as the API shows it. Its token (APNs) or endpoint
// (Web Push) is a bearer capability for pushing to it, so only its last
// characters leave the server, to tell devices apart.
type Device struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	Suffix     string     `json:"token_suffix"` // "…" and the token's (endpoint's) last 6 characters
	Name       string     `json:"name"`
	Operator   string     `json:"operator"`
	CreatedAt  time.Time  `json:"created_at"`
	LastResult string     `json:"last_result"`
	LastAt     *time.Time `json:"last_at"`
	RetiredAt  *time.Time `json:"retired_at"`
}

// Devices is the answer of GET /v1/devices.
type Devices struct {
	Devices []Device `json:"devices"`
}

// NewDevice is the body of POST /v1/devices: an APNs device token.
type NewDevice struct {
	Kind  string `json:"kind,omitempty"` // apns (the default)
	Token string `json:"token"`
	Name  string `json:"name,omitempty"`
}

// PushSubscription is the body of POST /v1/webpush/subscribe: a browser's
// PushSubscription.toJSON(), plus a name.
type PushSubscription struct {
	Endpoint       string   `json:"endpoint"`
	ExpirationTime *int64   `json:"expirationTime,omitempty"`
	Keys           PushKeys `json:"keys"`
	Name           string   `json:"name,omitempty"`
}

// PushKeys is a subscription's encryption keys.
type PushKeys struct {
	P256dh string `json:"p256dh"`
	Auth   string `json:"auth"`
}

// Unsubscribe is the body of POST /v1/webpush/unsubscribe.
type Unsubscribe struct {
	Endpoint string `json:"endpoint"`
}

// VAPIDKey is the answer of GET /v1/webpush/key.
type VAPIDKey struct {
	PublicKey string `json:"public_key"`
}
