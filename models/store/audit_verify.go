package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"gorm.io/gorm"
)

// ChainError names the first entry at which a chain fails to verify.
type ChainError struct {
	Chain uint32
	Seq   uint64
	Why   string
}

func (e *ChainError) Error() string { return e.Where() + ": " + e.Why }

// Where is "seq N" on chain 0 (as it read when there was one chain), else
// "chain C seq N".
func (e *ChainError) Where() string {
	if e.Chain == 0 {
		return fmt.Sprintf("seq %d", e.Seq)
	}
	return fmt.Sprintf("chain %d seq %d", e.Chain, e.Seq)
}

// ChainVerifier checks entries one by one, each chain's in order from seq 1;
// the chains' entries may come interleaved or one chain after another.
type ChainVerifier struct {
	N int // entries checked
	// Head, when set, is a head saved earlier: every chain it names must
	// still hold its entry unchanged.
	Head *SignedHead

	chains map[uint32]*ChainHead // each chain's last good entry
}

// NewChainVerifier starts at the beginning of every chain.
func NewChainVerifier() *ChainVerifier { return &ChainVerifier{chains: map[uint32]*ChainHead{}} }

// Chain is how far chain c has verified: its last good entry (seq 0 and
// ZeroHash before any).
func (v *ChainVerifier) Chain(c uint32) ChainHead {
	if h := v.chains[c]; h != nil {
		return *h
	}
	return ChainHead{Chain: c, Hash: ZeroHash}
}

// Chains is every chain that has verified entries, in chain order.
func (v *ChainVerifier) Chains() []ChainHead {
	out := make([]ChainHead, 0, len(v.chains))
	for _, h := range v.chains {
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Chain < out[j].Chain })
	return out
}

// saved is the saved head's link for chain c, if it names that chain.
func (v *ChainVerifier) saved(c uint32) (ChainHead, bool) {
	if v.Head == nil {
		return ChainHead{}, false
	}
	for _, h := range v.Head.ChainHeads() {
		if h.Chain == c {
			return h, true
		}
	}
	return ChainHead{}, false
}

// Next checks e against the entry before it on its chain: its seq follows,
// its prev_hash is that entry's hash, its hash is its own, its detail an
// object.
func (v *ChainVerifier) Next(e AuditEntry) error {
	last := v.Chain(e.Chain)
	want := last.Seq + 1
	fail := func(seq uint64, why string) error { return &ChainError{Chain: e.Chain, Seq: seq, Why: why} }
	switch {
	case e.Seq > want:
		return fail(want, fmt.Sprintf("missing: the next entry is seq %d", e.Seq))
	case e.Seq < want:
		return fail(want, fmt.Sprintf("out of order: seq %d comes where seq %d belongs", e.Seq, want))
	case e.PrevHash != last.Hash:
		return fail(e.Seq, "prev_hash is not the hash of the entry before")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(e.Detail, &obj); err != nil || obj == nil {
		return fail(e.Seq, "detail is not a JSON object")
	}
	h, err := e.ComputeHash()
	if err != nil {
		return fail(e.Seq, "cannot canonicalise: "+err.Error())
	}
	if h != e.Hash {
		return fail(e.Seq, "hash does not match the entry's content")
	}
	if s, ok := v.saved(e.Chain); ok && e.Seq == s.Seq && (e.Hash != s.Hash || e.At != s.At) {
		return fail(e.Seq, "differs from the saved head: the chain was rewritten")
	}
	v.N++
	v.chains[e.Chain] = &ChainHead{Chain: e.Chain, Seq: e.Seq, Hash: e.Hash, At: e.At}
	return nil
}

// Finish reports what Next cannot see: a chain that ends before the saved
// head's entry on it.
func (v *ChainVerifier) Finish() error {
	if v.Head == nil {
		return nil
	}
	for _, s := range v.Head.ChainHeads() {
		if got := v.Chain(s.Chain); got.Seq < s.Seq {
			return &ChainError{Chain: s.Chain, Seq: got.Seq + 1,
				Why: fmt.Sprintf("missing: the chain ends at seq %d, before the saved head's seq %d (cut off)", got.Seq, s.Seq)}
		}
	}
	return nil
}

// VerifyAudit checks every chain in the database, and that the head each
// chain's row records is its last entry (so a row appended or removed by hand
// at the end is caught), that no row lies outside a chain. With saved, it
// also checks each chain still holds the saved head's entry unchanged. The
// verifier tells how far it got.
func (s *Store) VerifyAudit(ctx context.Context, saved *SignedHead) (*ChainVerifier, error) {
	db := s.DB.WithContext(ctx)
	v := NewChainVerifier()
	v.Head = saved
	heads, err := s.auditHeads(db)
	if err != nil {
		return v, err
	}
	for i, h := range heads {
		if h.ID != i+1 { // a head row removed: its chain's entries would go unread
			return v, &ChainError{Chain: uint32(i), Seq: 1, Why: fmt.Sprintf("the head row of chain %d is missing", i)}
		}
		if err := v.verifyChain(db, h.Chain()); err != nil {
			return v, err
		}
	}
	var loose Audit
	err = db.Where("seq IS NULL OR seq = 0 OR chain >= ?", len(heads)).Order("id").Take(&loose).Error
	if err == nil {
		return v, &ChainError{Chain: loose.Chain, Seq: v.Chain(loose.Chain).Seq + 1, Why: fmt.Sprintf("row id %d has no seq or no chain's head: written outside the chain", loose.ID)}
	}
	if !notFound(err) {
		return v, err
	}
	return v, v.Finish()
}

// verifyChain checks one chain's entries and its head row. A server still
// running appends meanwhile: a head row that moved past the entries read is
// followed up (its entries committed with it), a few times.
func (v *ChainVerifier) verifyChain(db *gorm.DB, chain uint32) error {
	for range 5 {
		if err := v.verifyEntries(db, chain); err != nil {
			return err
		}
		var h AuditHead
		if err := db.Where("id = ?", int(chain)+1).Take(&h).Error; err != nil {
			return fmt.Errorf("read the audit head of chain %d: %w", chain, err)
		}
		got := v.Chain(chain)
		switch {
		case h.Seq > got.Seq:
			if err := v.verifyEntries(db, chain); err != nil {
				return err
			}
			if got = v.Chain(chain); got.Seq < h.Seq {
				return &ChainError{Chain: chain, Seq: got.Seq + 1, Why: fmt.Sprintf("missing: the recorded head is seq %d", h.Seq)}
			}
			if got.Seq > h.Seq {
				continue // more appended since: read the head again
			}
		case h.Seq < got.Seq:
			return &ChainError{Chain: chain, Seq: h.Seq + 1, Why: fmt.Sprintf("beyond the recorded head (seq %d): appended outside the server", h.Seq)}
		}
		if h.Hash != got.Hash {
			return &ChainError{Chain: chain, Seq: h.Seq, Why: "differs from the recorded head"}
		}
		return nil
	}
	return fmt.Errorf("chain %d kept moving while it was verified: verify again", chain)
}

// verifyEntries checks the chain's entries after the last one checked.
func (v *ChainVerifier) verifyEntries(db *gorm.DB, chain uint32) error {
	for {
		var rows []Audit
		if err := db.Where("chain = ? AND seq > ?", chain, v.Chain(chain).Seq).Order("seq").Limit(1000).Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		for i := range rows {
			if err := v.Next(rows[i].Entry()); err != nil {
				return err
			}
		}
	}
}
