package models

import (
	"context"

	"gorm.io/gorm"
)

// Transact runs fn through the store's transact with no announcement, for
// tests of the group commit.
func Transact(s *Store, ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.transact(s.DB.WithContext(ctx), fn, func() (*Request, string) { return nil, "" })
}

// GroupCommits reports whether the store batches transactions, and sets the
// batcher's hooks: queued gets the queue length at each arrival, committed
// the size of each committed batch.
func GroupCommits(s *Store, queued, committed func(n int)) bool {
	if s.batch == nil {
		return false
	}
	s.batch.queued, s.batch.committed = queued, committed
	return true
}

// OnDecideRead sets a hook that runs between a decision's read and its write
// (nil: none).
func OnDecideRead(s *Store, f func(r *Request)) { s.decideRead = f }

// LoadRequest is the store's hand-scanned read of one request.
func LoadRequest(db *gorm.DB, id string) (*Request, error) { return loadRequest(db, id) }

// RequestColumns is the column list LoadRequest reads.
const RequestColumns = requestColumns

// InsertRequest is the store's hand-written INSERT of a new request.
func InsertRequest(db *gorm.DB, r *Request) error { return insertRequest(db, r) }

// OpenCached reports whether the store holds a guess at id's record.
func OpenCached(s *Store, id string) bool {
	_, ok := s.open.get(id)
	return ok
}
