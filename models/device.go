package models

import (
	"crypto/ecdh"
	"encoding/base64"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/internal/lazyregexp"
)

// Device kinds.
const (
	DeviceAPNs    = "apns"
	DeviceWebPush = "webpush"
)

// Device is where an operator's notifications go: an APNs device token, or a
// Web Push subscription (endpoint and its keys).
type Device struct {
	ID         string `gorm:"primaryKey;size:40"`
	Kind       string `gorm:"size:16;not null"`
	Token      string `gorm:"size:2048;not null;uniqueIndex"` // APNs token (lower-case hex) or Web Push endpoint
	P256dh     string `gorm:"size:200"`                       // Web Push only: the browser's public key
	Auth       string `gorm:"size:100"`                       // Web Push only: the auth secret
	Name       string `gorm:"size:100"`                       // what the operator calls it
	OperatorID string `gorm:"size:40;not null"`
	Operator   string `gorm:"size:200;not null"` // label of who registered it
	// The owner's groups when it registered, and whether the owner is known:
	// alerts for a request with an approval policy go only to devices whose
	// owner may vote. Devices registered before owners counted (Owned false)
	// belong to everyone and get every alert.
	OperatorGroups []string `gorm:"serializer:json"`
	Owned          bool     `gorm:"not null;default:false"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
	LastResult     string `gorm:"size:200"`
	LastAt         *time.Time
	RetiredAt      *time.Time `gorm:"index"`
}

// MayVoteOn reports whether the device's owner may vote on r, so an alert
// about r is for them: always without a policy, or for a device of no known
// owner.
func (d *Device) MayVoteOn(r *Request) bool {
	if r.Approvers == nil || !d.Owned {
		return true
	}
	owner := Principal{ID: d.OperatorID, Role: RoleOperator, Name: strings.TrimPrefix(d.Operator, RoleOperator+":"), Groups: d.OperatorGroups}
	return r.MayVote(owner) == nil
}

// Live reports whether pushes still go to the device.
func (d *Device) Live() bool { return d.RetiredAt == nil }

// APNsToken is what an APNs device token looks like, lower-cased.
var APNsToken = lazyregexp.New(`^[0-9a-f]{32,200}$`)

// NormalizeDevice validates what an operator registers and lower-cases an APNs token.
func NormalizeDevice(d *Device) error {
	switch d.Kind {
	case DeviceAPNs:
		d.Token = strings.ToLower(strings.TrimSpace(d.Token))
		if !APNsToken.MatchString(d.Token) {
			return Errorf(ECodeInvalid, "token must be the APNs device token in hex (32 to 200 digits)")
		}
		d.P256dh, d.Auth = "", ""
	case DeviceWebPush:
		if err := checkEndpoint(d.Token); err != nil {
			return err
		}
		if b, err := decodeKey(d.P256dh); err != nil || len(b) != 65 {
			return Errorf(ECodeInvalid, "keys.p256dh must be a base64url P-256 public key (65 bytes)")
		} else if _, err := ecdh.P256().NewPublicKey(b); err != nil {
			return Errorf(ECodeInvalid, "keys.p256dh is not a point on P-256")
		}
		if b, err := decodeKey(d.Auth); err != nil || len(b) != 16 {
			return Errorf(ECodeInvalid, "keys.auth must be a base64url 16-byte secret")
		}
	default:
		return Errorf(ECodeInvalid, "kind %q is not one of apns, webpush", d.Kind)
	}
	if len(d.Name) > 100 {
		return Errorf(ECodeInvalid, "name is longer than 100 bytes")
	}
	return nil
}

// checkEndpoint accepts an https push service URL, or plain http on loopback
// (a push service under test).
func checkEndpoint(s string) error {
	if len(s) > 2048 {
		return Errorf(ECodeInvalid, "endpoint is longer than 2048 bytes")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return Errorf(ECodeInvalid, "endpoint must be an absolute https URL")
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); u.Scheme == "http" && (host == "localhost" || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return Errorf(ECodeInvalid, "endpoint must be an absolute https URL")
}

// decodeKey reads the base64url (padded or not, or standard) a browser gives.
func decodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}
