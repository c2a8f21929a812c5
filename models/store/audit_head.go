package store

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"

	"github.com/gatehousehq/gatehouse/api"
	"github.com/gatehousehq/gatehouse/models"
)

// SignedHead is the chain's newest link signed by the server's key, as
// GET /v1/audit/head answers it. Saved elsewhere, it later proves the chain up
// to Seq was this one.
type SignedHead = api.AuditHead

// AuditHead reads the newest link and signs it with the server's key (the one
// served at /v1/keys).
func (s *Store) AuditHead(ctx context.Context) (*SignedHead, error) {
	var h AuditHead
	if err := s.DB.WithContext(ctx).Where("id = 1").Take(&h).Error; err != nil {
		return nil, err
	}
	k, err := s.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	sig := ed25519.Sign(k.Private(), []byte(api.HeadSigningString(h.Seq, h.Hash, h.At)))
	return &SignedHead{Seq: h.Seq, Hash: h.Hash, At: h.At, KeyID: k.ID, Signature: base64.StdEncoding.EncodeToString(sig)}, nil
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
