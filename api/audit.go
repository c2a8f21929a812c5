package api

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// AuditEntry is one link of the hash-chained trail, as GET /v1/audit, the
// export and the hash see it (docs/audit.md): hash is hex SHA-256 of the RFC
// 8785 canonical JSON of the entry without hash. Chain names which of the
// trail's chains it links (seq counts within that chain); chain 0 leaves it
// out, so an entry written before there were several chains hashes as it did.
type AuditEntry struct {
	Chain     uint32          `json:"chain,omitempty"`
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
// entries in order and the seq to pass as ?after= for the next page. GET
// /v1/audit pages through one chain, ?chain= (0 when absent); a request's
// trail may span chains and is in the order of the entries' "at".
type AuditPage struct {
	Chain   uint32       `json:"chain,omitempty"`
	Entries []AuditEntry `json:"entries"`
	Next    uint64       `json:"next"`
}

// AuditHead is the trail's newest links, every chain's, signed by the
// server's key (the one at /v1/keys): Ed25519 over HeadsSigningString.
//
// A head saved before there were several chains has no chains, only seq, hash
// and at (chain 0's), signed over HeadSigningString; Verify still checks it.
type AuditHead struct {
	Chains    []AuditChainHead `json:"chains,omitempty"`
	Seq       uint64           `json:"seq,omitempty"`
	Hash      string           `json:"hash,omitempty"`
	At        string           `json:"at,omitempty"`
	KeyID     string           `json:"key_id"`
	Signature string           `json:"signature"` // base64
}

// AuditChainHead is one chain's newest link: seq 0 and 64 zeros while the
// chain is empty.
type AuditChainHead struct {
	Chain uint32 `json:"chain"`
	Seq   uint64 `json:"seq"`
	Hash  string `json:"hash"`
	At    string `json:"at"` // the newest entry's "at"; "" while the chain is empty
}

// ChainHeads is every chain's newest link in h: a head saved before there
// were several chains is chain 0's.
func (h *AuditHead) ChainHeads() []AuditChainHead {
	if len(h.Chains) == 0 {
		return []AuditChainHead{{Chain: 0, Seq: h.Seq, Hash: h.Hash, At: h.At}}
	}
	return h.Chains
}

// ComputeHash is the hex SHA-256 of the RFC 8785 canonical JSON of e without
// its hash.
func (e AuditEntry) ComputeHash() (string, error) {
	c, err := e.canonical()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// canonical is the RFC 8785 form of e without its hash. Every change appends
// an entry inside the writer's turn, so the fixed shape is written directly
// (keys in their sorted order, strings escaped as JCS does) and only detail
// goes through the general canonicaliser; anything the direct form does not
// cover (invalid UTF-8, integers past 2^53) takes the general path, and a
// test and a fuzzer hold the two to the same bytes.
func (e AuditEntry) canonical() ([]byte, error) {
	const maxExact = 1 << 53
	if e.Seq > maxExact || e.Version > maxExact || e.Version < -maxExact {
		return e.canonicalJCS()
	}
	for _, s := range [...]string{e.Action, e.Actor, e.At, e.PrevHash, e.RequestID, e.Via} {
		if !utf8.ValidString(s) {
			return e.canonicalJCS()
		}
	}
	if len(e.Detail) == 0 {
		return e.canonicalJCS() // an error, as it always was
	}
	detail := []byte("{}")
	if string(e.Detail) != "{}" {
		d, err := jcs.Transform(e.Detail)
		if err != nil {
			return nil, err
		}
		detail = d
	}
	b := make([]byte, 0, 256+len(detail))
	b = append(b, `{"action":`...)
	b = appendJCSString(b, e.Action)
	b = append(b, `,"actor":`...)
	b = appendJCSString(b, e.Actor)
	b = append(b, `,"at":`...)
	b = appendJCSString(b, e.At)
	if e.Chain != 0 { // omitted for chain 0, as the general form omits it
		b = append(b, `,"chain":`...)
		b = strconv.AppendUint(b, uint64(e.Chain), 10)
	}
	b = append(b, `,"detail":`...)
	b = append(b, detail...)
	b = append(b, `,"prev_hash":`...)
	b = appendJCSString(b, e.PrevHash)
	b = append(b, `,"request_id":`...)
	b = appendJCSString(b, e.RequestID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(e.Version), 10)
	b = append(b, `,"via":`...)
	b = appendJCSString(b, e.Via)
	return append(b, '}'), nil
}

// canonicalJCS is canonical by the general canonicaliser.
func (e AuditEntry) canonicalJCS() ([]byte, error) {
	e.Hash = ""
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// appendJCSString appends s (valid UTF-8) as RFC 8785 writes a string:
// ECMAScript's JSON.stringify, which escapes only the quote, the backslash
// and the C0 controls, with the short forms where there are some.
func appendJCSString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// HeadSigningString is what a head saved before there were several chains
// is signed over.
func HeadSigningString(seq uint64, hash, at string) string {
	return "gatehouse-audit-head\n" + strconv.FormatUint(seq, 10) + "\n" + hash + "\n" + at
}

// HeadsSigningString is what a head's signature covers: every chain's newest
// link, one a line (chain, seq, hash, at), in the order given.
func HeadsSigningString(chains []AuditChainHead) string {
	b := []byte("gatehouse-audit-heads")
	for _, c := range chains {
		b = append(b, '\n')
		b = strconv.AppendUint(b, uint64(c.Chain), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, c.Seq, 10)
		b = append(b, ' ')
		b = append(b, c.Hash...)
		b = append(b, ' ')
		b = append(b, c.At...)
	}
	return string(b)
}

// signingString is what h's signature covers.
func (h *AuditHead) signingString() string {
	if len(h.Chains) == 0 {
		return HeadSigningString(h.Seq, h.Hash, h.At)
	}
	return HeadsSigningString(h.Chains)
}

// ErrHeadSignature is a head whose signature the key does not verify.
var ErrHeadSignature = errors.New("the head's signature does not verify with the server's key")

// Verify checks the head's signature with pub.
func (h *AuditHead) Verify(pub ed25519.PublicKey) error {
	sig, err := base64.StdEncoding.DecodeString(h.Signature)
	if err != nil || len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, []byte(h.signingString()), sig) {
		return ErrHeadSignature
	}
	return nil
}
