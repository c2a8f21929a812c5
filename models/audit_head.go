package models

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strconv"
)

// SignedHead is the chain's newest link signed by the server's key, as
// GET /v1/audit/head answers it. Saved elsewhere, it later proves the chain up
// to Seq was this one.
type SignedHead struct {
	Seq       uint64 `json:"seq"`
	Hash      string `json:"hash"`
	At        string `json:"at"`
	KeyID     string `json:"key_id"`
	Signature string `json:"signature"` // base64 Ed25519 over HeadSigningString
}

// HeadSigningString is what a head's signature covers.
func HeadSigningString(seq uint64, hash, at string) string {
	return "gatehouse-audit-head\n" + strconv.FormatUint(seq, 10) + "\n" + hash + "\n" + at
}

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
	sig := ed25519.Sign(k.Private(), []byte(HeadSigningString(h.Seq, h.Hash, h.At)))
	return &SignedHead{Seq: h.Seq, Hash: h.Hash, At: h.At, KeyID: k.ID, Signature: base64.StdEncoding.EncodeToString(sig)}, nil
}

// ErrHeadSignature is a head whose signature the key does not verify.
var ErrHeadSignature = errors.New("the head's signature does not verify with the server's key")

// Verify checks the head's signature with pub.
func (h *SignedHead) Verify(pub ed25519.PublicKey) error {
	sig, err := base64.StdEncoding.DecodeString(h.Signature)
	if err != nil || len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, []byte(HeadSigningString(h.Seq, h.Hash, h.At)), sig) {
		return ErrHeadSignature
	}
	return nil
}

// PublicKey reads the public half of the server key id without making one.
func (s *Store) PublicKey(ctx context.Context, id string) (ed25519.PublicKey, error) {
	var k ServerKey
	if err := s.DB.WithContext(ctx).Where("id = ?", id).Take(&k).Error; err != nil {
		if notFound(err) {
			return nil, Errorf(ECodeNotFound, "no server key %s in the database", id)
		}
		return nil, err
	}
	return ed25519.PublicKey(k.Public), nil
}
