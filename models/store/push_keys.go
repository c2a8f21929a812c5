package store

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm/clause"
)

// Setting is a small named value the server keeps for itself (keys made at
// first start).
type Setting struct {
	Name      string `gorm:"primaryKey;size:64"`
	Value     string `gorm:"not null"`
	CreatedAt time.Time
}

const vapidSetting = "vapid_keys"

// VAPIDKeys is the server's Web Push identity: a P-256 key pair, each half
// base64url without padding as browsers and webpush-go expect.
type VAPIDKeys struct {
	Public  string `json:"public"`
	Private string `json:"private"`
}

// VAPIDKeys returns the server's Web Push keys, making them on first use. Every
// replica reads the same pair: the first insert wins and the others read it.
func (s *Store) VAPIDKeys(ctx context.Context) (VAPIDKeys, error) {
	db := s.DB.WithContext(ctx)
	var row Setting
	err := db.Where("name = ?", vapidSetting).Take(&row).Error
	if notFound(err) {
		k, gerr := newVAPIDKeys()
		if gerr != nil {
			return VAPIDKeys{}, gerr
		}
		b, _ := json.Marshal(k)
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&Setting{Name: vapidSetting, Value: string(b), CreatedAt: s.now()}).Error; err != nil {
			return VAPIDKeys{}, err
		}
		err = db.Where("name = ?", vapidSetting).Take(&row).Error
	}
	if err != nil {
		return VAPIDKeys{}, err
	}
	var k VAPIDKeys
	if err := json.Unmarshal([]byte(row.Value), &k); err != nil {
		return VAPIDKeys{}, models.Errorf(models.ECodeInternal, "stored VAPID keys are unreadable: %v", err)
	}
	return k, nil
}

func newVAPIDKeys() (VAPIDKeys, error) {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return VAPIDKeys{}, err
	}
	enc := base64.RawURLEncoding.EncodeToString
	return VAPIDKeys{Public: enc(k.PublicKey().Bytes()), Private: enc(k.Bytes())}, nil
}
