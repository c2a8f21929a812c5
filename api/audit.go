package api

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gowebpki/jcs"
)

// AuditEntry is one link of the hash-chained trail, as GET /v1/audit, the
// export and the hash see it (docs/audit.md): hash is hex SHA-256 of the RFC
// 8785 canonical JSON of the entry without hash.
type AuditEntry struct {
	Seq       uint64          `json:"seq"`
	At        string          `json:"at"`
	RequestID string          `json:"request_id"`
	Version   int             `json:"version"`
	Action    string          `json:"action"`
	Actor     string          `json:"actor"`
	Via       string          `json:"via"`
	Detail    json.RawMessage `json:"detail"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash,omitempty"`
}

// AuditPage is the answer of GET /v1/audit and GET /v1/requests/{id}/audit:
// entries in chain order and the seq to pass as ?after= for the next page.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	Next    uint64       `json:"next"`
}

// AuditHead is the chain's newest link signed by the server's key (the one at
// /v1/keys): Ed25519 over "gatehouse-audit-head\n" + seq + "\n" + hash + "\n" + at.
type AuditHead struct {
	Seq       uint64 `json:"seq"`
	Hash      string `json:"hash"`
	At        string `json:"at"`
	KeyID     string `json:"key_id"`
	Signature string `json:"signature"` // base64
}

// ComputeHash is the hex SHA-256 of the RFC 8785 canonical JSON of e without
// its hash.
func (e AuditEntry) ComputeHash() (string, error) {
	e.Hash = ""
	b, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	c, err := jcs.Transform(b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// HeadSigningString is what a head's signature covers.
func HeadSigningString(seq uint64, hash, at string) string {
	return "gatehouse-audit-head\n" + strconv.FormatUint(seq, 10) + "\n" + hash + "\n" + at
}

// ErrHeadSignature is a head whose signature the key does not verify.
var ErrHeadSignature = errors.New("the head's signature does not verify with the server's key")

// Verify checks the head's signature with pub.
func (h *AuditHead) Verify(pub ed25519.PublicKey) error {
	sig, err := base64.StdEncoding.DecodeString(h.Signature)
	if err != nil || len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, []byte(HeadSigningString(h.Seq, h.Hash, h.At)), sig) {
		return ErrHeadSignature
	}
	return nil
}
