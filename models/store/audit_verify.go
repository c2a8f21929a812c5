package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// ChainError names the first entry at which a chain fails to verify.
type ChainError struct {
	Seq uint64
	Why string
}

func (e *ChainError) Error() string { return fmt.Sprintf("seq %d: %s", e.Seq, e.Why) }

// ChainVerifier checks entries one by one, in order, from seq 1.
type ChainVerifier struct {
	N    int    // entries checked
	Seq  uint64 // the last good entry's seq; 0 before any
	Hash string // its hash; ZeroHash before any
	// Head, when set, is a head saved earlier: the chain must still hold its
	// entry unchanged.
	Head *SignedHead
}

// NewChainVerifier starts at the beginning of the chain.
func NewChainVerifier() *ChainVerifier { return &ChainVerifier{Hash: ZeroHash} }

// Next checks e against the entry before it: its seq follows, its prev_hash is
// that entry's hash, its hash is its own, its detail an object.
func (v *ChainVerifier) Next(e AuditEntry) error {
	want := v.Seq + 1
	switch {
	case e.Seq > want:
		return &ChainError{Seq: want, Why: fmt.Sprintf("missing: the next entry is seq %d", e.Seq)}
	case e.Seq < want:
		return &ChainError{Seq: want, Why: fmt.Sprintf("out of order: seq %d comes where seq %d belongs", e.Seq, want)}
	case e.PrevHash != v.Hash:
		return &ChainError{Seq: e.Seq, Why: "prev_hash is not the hash of the entry before"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(e.Detail, &obj); err != nil || obj == nil {
		return &ChainError{Seq: e.Seq, Why: "detail is not a JSON object"}
	}
	h, err := e.ComputeHash()
	if err != nil {
		return &ChainError{Seq: e.Seq, Why: "cannot canonicalise: " + err.Error()}
	}
	if h != e.Hash {
		return &ChainError{Seq: e.Seq, Why: "hash does not match the entry's content"}
	}
	if v.Head != nil && e.Seq == v.Head.Seq && (e.Hash != v.Head.Hash || e.At != v.Head.At) {
		return &ChainError{Seq: e.Seq, Why: "differs from the saved head: the chain was rewritten"}
	}
	v.N++
	v.Seq, v.Hash = e.Seq, e.Hash
	return nil
}

// Finish reports what Next cannot see: a chain that ends before the saved head.
func (v *ChainVerifier) Finish() error {
	if v.Head != nil && v.Seq < v.Head.Seq {
		return &ChainError{Seq: v.Seq + 1, Why: fmt.Sprintf("missing: the chain ends at seq %d, before the saved head's seq %d (cut off)", v.Seq, v.Head.Seq)}
	}
	return nil
}

// VerifyAudit checks the whole chain in the database, and that the head the
// database records is its last entry (so a row appended or removed by hand
// at the end is caught). With saved, it also checks that entry is still there
// unchanged. The verifier tells how far it got.
func (s *Store) VerifyAudit(ctx context.Context, saved *SignedHead) (*ChainVerifier, error) {
	db := s.DB.WithContext(ctx)
	v := NewChainVerifier()
	v.Head = saved
	for {
		var rows []Audit
		if err := db.Where("seq > ?", v.Seq).Order("seq").Limit(1000).Find(&rows).Error; err != nil {
			return v, err
		}
		if len(rows) == 0 {
			break
		}
		for i := range rows {
			if err := v.Next(rows[i].Entry()); err != nil {
				return v, err
			}
		}
	}
	var loose Audit
	err := db.Where("seq IS NULL OR seq = 0").Order("id").Take(&loose).Error
	if err == nil {
		return v, &ChainError{Seq: v.Seq + 1, Why: fmt.Sprintf("row id %d has no seq: written outside the chain", loose.ID)}
	}
	if !notFound(err) {
		return v, err
	}
	var h AuditHead
	if err := db.Where("id = 1").Take(&h).Error; err != nil {
		return v, fmt.Errorf("read the audit head: %w", err)
	}
	switch {
	case h.Seq > v.Seq:
		return v, &ChainError{Seq: v.Seq + 1, Why: fmt.Sprintf("missing: the recorded head is seq %d", h.Seq)}
	case h.Seq < v.Seq:
		return v, &ChainError{Seq: h.Seq + 1, Why: fmt.Sprintf("beyond the recorded head (seq %d): appended outside the server", h.Seq)}
	case h.Hash != v.Hash:
		return v, &ChainError{Seq: h.Seq, Why: "differs from the recorded head"}
	}
	return v, v.Finish()
}
