package store

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// SignedHead is every chain's newest link signed by the server's key, as
// GET /v1/audit/head answers it. Saved elsewhere, it later proves each chain
// up to its seq was this one.
type SignedHead = api.AuditHead

// ChainHead is one chain's newest link in a signed head.
type ChainHead = api.AuditChainHead

// AuditHead reads every chain's newest link, in one statement so they are one
// moment's, and signs them with the server's key (the one served at /v1/keys).
func (s *Store) AuditHead(ctx context.Context) (*SignedHead, error) {
	heads, err := s.auditHeads(s.DB.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	k, err := s.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	chains := make([]ChainHead, len(heads))
	for i, h := range heads {
		chains[i] = ChainHead{Chain: h.Chain(), Seq: h.Seq, Hash: h.Hash, At: h.At}
	}
	sig := ed25519.Sign(k.Private(), []byte(api.HeadsSigningString(chains)))
	return &SignedHead{Chains: chains, KeyID: k.ID, Signature: base64.StdEncoding.EncodeToString(sig)}, nil
}

// auditHeads reads every chain's head row, in chain order.
func (s *Store) auditHeads(db *gorm.DB) ([]AuditHead, error) {
	var heads []AuditHead
	if err := db.Order("id").Find(&heads).Error; err != nil {
		return nil, err
	}
	if len(heads) == 0 {
		return nil, fmt.Errorf("audit head is missing: the database is not migrated")
	}
	return heads, nil
}

// PublicKey reads the public half of the server key id without making one.
func (s *Store) PublicKey(ctx context.Context, id string) (ed25519.PublicKey, error) {
	var k ServerKey
	if err := s.DB.WithContext(ctx).Where("id = ?", id).Take(&k).Error; err != nil {
		if notFound(err) {
			return nil, models.Errorf(models.ECodeNotFound, "no server key %s in the database", id)
		}
		return nil, err
	}
	return ed25519.PublicKey(k.Public), nil
}

// ErrHeadSignature is a head whose signature the key does not verify.
var ErrHeadSignature = api.ErrHeadSignature
