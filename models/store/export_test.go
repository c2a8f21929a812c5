package store

import (
	"context"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// Transact runs fn through the store's transact with no announcement, for
// tests of the group commit.
func Transact(s *Store, ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.transact(s.DB.WithContext(ctx), fn, func() (*models.Request, string) { return nil, "" })
}

// AppendAudit links a to the audit chain and writes it inside tx.
func AppendAudit(tx *gorm.DB, a *Audit) error { return appendAudit(tx, a) }

// NotifyPayload is what a change's NOTIFY carries.
func NotifyPayload(ch models.Change) (string, error) { return notifyPayload(ch) }

// DecodeChange is how a replica reads a NOTIFY payload.
func DecodeChange(payload string) (models.Change, error) { return decodeChange(payload) }

// GroupCommits sets the batcher's hooks: queued gets the queue length at each
// arrival, committed the size of each committed batch.
func GroupCommits(s *Store, queued, committed func(n int)) {
	s.batch.queued, s.batch.committed = queued, committed
}

// Checkpoints sets how many writers (in ten batches or more) the batcher lets
// commit between its checkpoints, and a hook run as each begins (nil: none).
func Checkpoints(s *Store, every int, at func()) {
	s.batch.checkpointEvery, s.batch.checkpointing = every, at
}

// OnLoginRead sets a hook that runs between a login's check of its token and
// the transaction that opens its session (nil: none).
func OnLoginRead(s *Store, f func()) { s.loginRead = f }

// OnDecideRead sets a hook that runs between a decision's read and its write
// (nil: none).
func OnDecideRead(s *Store, f func(r *models.Request)) { s.decideRead = f }

// OnRememberedRead sets a hook that runs between a filing's read of the
// remembered allow that covers it and the filing's transaction (nil: none).
func OnRememberedRead(s *Store, f func(grantID string)) { s.rememberedRead = f }

// LoadRequest is the store's hand-scanned read of one request.
func LoadRequest(db *gorm.DB, id string) (*models.Request, error) { return loadRequest(db, id) }

// RequestColumns is the column list LoadRequest reads.
const RequestColumns = requestColumns

// InsertRequest is the store's hand-written INSERT of a new request.
func InsertRequest(db *gorm.DB, r *models.Request) error { return insertRequest(db, r) }

// OpenCached reports whether the store holds a guess at id's record.
func OpenCached(s *Store, id string) bool {
	_, ok := s.open.get(id)
	return ok
}

// OpenCache is the store's cache of open records, for tests of its bounds.
type OpenCache = openCache

// NewOpenCache returns an empty cache.
func NewOpenCache() *OpenCache { return newOpenCache() }

// Committed hands the cache changes as a commit does.
func (c *openCache) Committed(changes []models.Change) { c.committed(changes) }

// Size is how many records the cache holds and the bytes it counts for them.
func (c *openCache) Size() (n, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes
}

// ClaimForwards claims up to limit pending sends that are due and not claimed
// by a live process, for lease. Each claim is a conditional UPDATE, so several
// processes on one database never send the same attempt twice.
func (s *Store) ClaimForwards(ctx context.Context, owner string, limit int, lease time.Duration) ([]Forward, error) {
	now := s.now()
	db := s.DB.WithContext(ctx)
	var due []Forward
	err := withCallback(db).Where("next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until < ?)", now, now).
		Order("next_attempt_at, id").Limit(limit).Find(&due).Error
	if err != nil {
		return nil, err
	}
	return s.claimRows(ctx, owner, due, now, lease)
}

// Watch returns a channel closed at the next change of request id (or, for a
// RuntimeKey, the runtime's next decision), and a stop function that must be
// called when the caller no longer waits.
func (c *Changes) Watch(id string) (<-chan struct{}, func()) {
	w := make(chan struct{})
	stop := c.WatchFunc(id, func(models.Change) { close(w) })
	return w, func() { stop() }
}

// AppendAudit records an event that changes no record (a forward attempt, a push).
func (s *Store) AppendAudit(ctx context.Context, requestID string, version int, action, actor, via string, detail map[string]any) error {
	r := &models.Request{ID: requestID, Version: version}
	// Through transact, so it shares a group commit with the writes around it.
	return s.transact(s.DB.WithContext(ctx), func(tx *gorm.DB) error {
		return s.audit(tx, r, action, actor, via, detail)
	}, func() (*models.Request, string) { return nil, "" })
}
