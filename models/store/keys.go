package store

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// ServerKey is the Ed25519 key pair that signs forwards. It is made at first
// start and kept in the database, so every replica signs with the same key and
// a runtime's pinned public key survives restarts. Seed is the private key's
// 32-byte seed; whoever can read the database can sign (as they could decide).
type ServerKey struct {
	ID        string `gorm:"primaryKey;size:40"`
	Seed      []byte `gorm:"not null"`
	Public    []byte `gorm:"not null"`
	CreatedAt time.Time
}

// Private returns the signing key.
func (k *ServerKey) Private() ed25519.PrivateKey { return ed25519.NewKeyFromSeed(k.Seed) }

// SigningKey returns the server's key pair, making it on first use. When two
// processes make one at once, both then use the oldest, so they agree.
func (s *Store) SigningKey(ctx context.Context) (*ServerKey, error) {
	db := s.DB.WithContext(ctx)
	var keys []ServerKey
	if err := db.Order("created_at, id").Limit(1).Find(&keys).Error; err != nil {
		return nil, err
	}
	if len(keys) == 1 {
		return &keys[0], nil
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	k := ServerKey{ID: models.NewID("key_"), Seed: priv.Seed(), Public: pub, CreatedAt: s.now()}
	if err := db.Create(&k).Error; err != nil {
		return nil, err
	}
	if err := db.Order("created_at, id").Limit(1).Find(&keys).Error; err != nil {
		return nil, err
	}
	return &keys[0], nil
}
