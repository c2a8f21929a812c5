package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// RegisterDevice records a device for an operator. Registering a token again
// updates it (new keys, name, owner) and brings a retired one back to life;
// created is false then.
func (s *Store) RegisterDevice(ctx context.Context, by models.Principal, d models.Device) (*models.Device, bool, error) {
	if err := models.NormalizeDevice(&d); err != nil {
		return nil, false, err
	}
	now := s.now()
	d.OperatorID, d.Operator, d.OperatorGroups, d.Owned, d.UpdatedAt = by.ID, by.Label(), by.Groups, true, now
	db := s.DB.WithContext(ctx)
	// Two tries: a concurrent first registration of the same token makes our
	// insert lose; the second pass then updates the winner's row.
	for range 2 {
		var cur models.Device
		err := db.Where("token = ?", d.Token).Take(&cur).Error
		if err == nil {
			res := db.Model(&models.Device{}).Where("id = ?", cur.ID).Updates(map[string]any{
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
		d.ID, d.CreatedAt, d.RetiredAt = models.NewID("dev_"), now, nil
		err = db.Create(&d).Error
		if err == nil {
			return &d, true, nil
		}
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, false, err
		}
	}
	return nil, false, models.Errorf(models.ECodeConflict, "the device is being registered concurrently; try again")
}

// ListDevices returns the devices pushes go to, oldest first; with retired, the
// retired ones too.
func (s *Store) ListDevices(ctx context.Context, retired bool) ([]models.Device, error) {
	q := s.DB.WithContext(ctx).Order("created_at, id")
	if !retired {
		q = q.Where("retired_at IS NULL")
	}
	var ds []models.Device
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
	if models.APNsToken.MatchString(strings.ToLower(t)) {
		t = strings.ToLower(t)
	}
	res := s.DB.WithContext(ctx).Where("id = ? OR token = ?", idOrToken, t).Delete(&models.Device{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return models.Errorf(models.ECodeNotFound, "no device %s", idOrToken)
	}
	return nil
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
		if err := s.audit(tx, &models.Request{ID: a.RequestID, Version: a.Version}, "push", "system", a.Kind, detail); err != nil {
			return err
		}
		upd := map[string]any{"last_result": result, "last_at": now}
		if a.Retire {
			upd["retired_at"] = now
		}
		return tx.Model(&models.Device{}).Where("id = ?", a.DeviceID).Updates(upd).Error
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
