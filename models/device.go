package models

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

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
	return r.mayVote(owner) == nil
}

// Live reports whether pushes still go to the device.
func (d *Device) Live() bool { return d.RetiredAt == nil }

var apnsToken = lazyregexp.New(`^[0-9a-f]{32,200}$`)

// NormalizeDevice validates what an operator registers and lower-cases an APNs token.
func NormalizeDevice(d *Device) error {
	switch d.Kind {
	case DeviceAPNs:
		d.Token = strings.ToLower(strings.TrimSpace(d.Token))
		if !apnsToken.MatchString(d.Token) {
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

// RegisterDevice records a device for an operator. Registering a token again
// updates it (new keys, name, owner) and brings a retired one back to life;
// created is false then.
func (s *Store) RegisterDevice(ctx context.Context, by Principal, d Device) (*Device, bool, error) {
	if err := NormalizeDevice(&d); err != nil {
		return nil, false, err
	}
	now := s.now()
	d.OperatorID, d.Operator, d.OperatorGroups, d.Owned, d.UpdatedAt = by.ID, by.Label(), by.Groups, true, now
	db := s.DB.WithContext(ctx)
	// Two tries: a concurrent first registration of the same token makes our
	// insert lose; the second pass then updates the winner's row.
	for range 2 {
		var cur Device
		err := db.Where("token = ?", d.Token).Take(&cur).Error
		if err == nil {
			res := db.Model(&Device{}).Where("id = ?", cur.ID).Updates(map[string]any{
				"kind": d.Kind, "p256dh": d.P256dh, "auth": d.Auth, "name": d.Name, "operator_id": d.OperatorID,
				"operator": d.Operator, "operator_groups": jsonText(d.OperatorGroups), "owned": true, "updated_at": now, "retired_at": nil,
			})
			if res.Error != nil {
				return nil, false, res.Error
			}
			d.ID, d.CreatedAt, d.LastResult, d.LastAt = cur.ID, cur.CreatedAt, cur.LastResult, cur.LastAt
			return &d, false, nil
		}
		if !notFound(err) {
			return nil, false, err
		}
		d.ID, d.CreatedAt, d.RetiredAt = NewID("dev_"), now, nil
		err = db.Create(&d).Error
		if err == nil {
			return &d, true, nil
		}
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, false, err
		}
	}
	return nil, false, Errorf(ECodeConflict, "the device is being registered concurrently; try again")
}

// ListDevices returns the devices pushes go to, oldest first; with retired, the
// retired ones too.
func (s *Store) ListDevices(ctx context.Context, retired bool) ([]Device, error) {
	q := s.DB.WithContext(ctx).Order("created_at, id")
	if !retired {
		q = q.Where("retired_at IS NULL")
	}
	var ds []Device
	err := q.Find(&ds).Error
	return ds, err
}

// HasDevices reports whether any device takes pushes: with none, the push
// router has nothing to plan, read or claim for a change.
func (s *Store) HasDevices(ctx context.Context) (bool, error) {
	var n int64
	err := s.reader(ctx).Raw("SELECT count(*) FROM (SELECT 1 FROM devices WHERE retired_at IS NULL LIMIT 1) d").Scan(&n).Error
	return n > 0, err
}

// DropDevice deletes a device named by its id or token; ECodeNotFound when none.
func (s *Store) DropDevice(ctx context.Context, idOrToken string) error {
	t := idOrToken
	if apnsToken.MatchString(strings.ToLower(t)) {
		t = strings.ToLower(t)
	}
	res := s.DB.WithContext(ctx).Where("id = ? OR token = ?", idOrToken, t).Delete(&Device{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return Errorf(ECodeNotFound, "no device %s", idOrToken)
	}
	return nil
}

// RetireDevice stops pushes to a device the push service no longer knows. It
// stays listed, with the reason, until it is registered again or dropped.
func (s *Store) RetireDevice(ctx context.Context, id, reason string) error {
	now := s.now()
	return s.DB.WithContext(ctx).Model(&Device{}).Where("id = ? AND retired_at IS NULL", id).
		Updates(map[string]any{"retired_at": now, "last_result": clip(reason, 200), "last_at": now}).Error
}

// PushAttempt is one try at delivering one notification to one device.
type PushAttempt struct {
	DeviceID  string
	Kind      string // apns, webpush
	Push      string // alert, badge, clear, test
	RequestID string // "" for a test push
	Version   int
	Attempt   int
	Status    int    // HTTP status; 0 when no answer came
	Result    string // "sent", or the reason it was not
	Retire    bool   // the push service says the device is gone
}

// RecordPush keeps one attempt: an audit row on the request ("push"), the
// device's last result, and its retirement when the service disowned it.
func (s *Store) RecordPush(ctx context.Context, a PushAttempt) error {
	now := s.now()
	result := clip(a.Result, 200)
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		detail := map[string]any{"device": a.DeviceID, "push": a.Push, "attempt": a.Attempt, "status": a.Status, "result": result}
		if a.Retire {
			detail["retired"] = true
		}
		if err := s.audit(tx, &Request{ID: a.RequestID, Version: a.Version}, "push", "system", a.Kind, detail); err != nil {
			return err
		}
		upd := map[string]any{"last_result": result, "last_at": now}
		if a.Retire {
			upd["retired_at"] = now
		}
		return tx.Model(&Device{}).Where("id = ?", a.DeviceID).Updates(upd).Error
	})
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// jsonText is v as the JSON text a serializer:json column holds, for a map
// update (which bypasses the serializer).
func jsonText(v any) string {
	b, _ := json.Marshal(v) // a []string always marshals
	return string(b)
}
