package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/gatehousehq/gatehouse/models"
	"gorm.io/gorm"
)

// ActionRevoke is the action of the notification a revocation sends on
// PostgreSQL: every replica drops its cached tokens and sessions. It carries
// no request and never reaches the change bus's subscribers.
const ActionRevoke = "revoke"

// maxCached bounds each of the cache's maps; a full map is emptied.
const maxCached = 10000

// authCache keeps the tokens and sessions calls authenticated with, so a call
// costs no database read. An entry is used only while nothing has been revoked
// since it was read:
//   - SQLite: every revocation, from any process (the token CLI too), raises
//     the file's revocation epoch (PRAGMA user_version) in its transaction, and
//     each use reads the epoch — a header read, far cheaper than the token's
//     row — and takes only entries read under the same epoch.
//   - PostgreSQL: every revocation sends an ActionRevoke NOTIFY in its
//     transaction; each replica's listener drops the cache when it arrives (and
//     at every resync, as notifications may have been missed). A read that
//     raced a drop is not kept (gen).
type authCache struct {
	epoch func(ctx context.Context) (int64, error) // nil: dropped by notification

	mu       sync.Mutex
	gen      uint64 // raised by each drop
	tokens   map[string]cached[models.Token]
	sessions map[string]cached[models.Session]
}

type cached[T any] struct {
	v     T
	epoch int64
}

func newAuthCache(epoch func(ctx context.Context) (int64, error)) *authCache {
	return &authCache{epoch: epoch, tokens: map[string]cached[models.Token]{}, sessions: map[string]cached[models.Session]{}}
}

// look is where a lookup starts: the generation and epoch an entry must match.
type look struct {
	gen   uint64
	epoch int64
}

func (c *authCache) begin(ctx context.Context) (look, error) {
	var l look
	if c.epoch != nil {
		e, err := c.epoch(ctx)
		if err != nil {
			return l, err
		}
		l.epoch = e
	}
	c.mu.Lock()
	l.gen = c.gen
	c.mu.Unlock()
	return l, nil
}

func (c *authCache) token(hash string, l look) (models.Token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.tokens[hash]
	return e.v, ok && e.epoch == l.epoch
}

func (c *authCache) session(hash string, l look) (models.Session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.sessions[hash]
	return e.v, ok && e.epoch == l.epoch
}

func (c *authCache) putToken(hash string, t models.Token, l look) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != l.gen {
		return // a revocation arrived while this was read
	}
	if len(c.tokens) >= maxCached {
		clear(c.tokens)
	}
	c.tokens[hash] = cached[models.Token]{t, l.epoch}
}

func (c *authCache) putSession(hash string, s models.Session, l look) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != l.gen {
		return
	}
	if len(c.sessions) >= maxCached {
		clear(c.sessions)
	}
	c.sessions[hash] = cached[models.Session]{s, l.epoch}
}

// drop forgets every entry.
func (c *authCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.tokens)
	clear(c.sessions)
}

// sqliteEpoch reads a SQLite file's revocation epoch.
//
// It is read at every authenticated call, so it is one prepared statement on
// the pool, not a GORM query, and it runs without the call's cancellation: the
// driver watches a cancellable context with a goroutine per statement, and a
// header read cannot hang.
func sqliteEpoch(pool func() *gorm.DB) func(ctx context.Context) (int64, error) {
	var (
		mu   sync.Mutex
		of   *sql.DB
		stmt *sql.Stmt
	)
	return func(ctx context.Context) (int64, error) {
		sqlDB, err := pool().DB()
		if err != nil {
			return 0, err
		}
		mu.Lock()
		if of != sqlDB {
			st, err := sqlDB.Prepare("PRAGMA user_version")
			if err != nil {
				mu.Unlock()
				return 0, err
			}
			if stmt != nil {
				stmt.Close()
			}
			of, stmt = sqlDB, st
		}
		st := stmt
		mu.Unlock()
		var v int64
		err = st.QueryRowContext(context.WithoutCancel(ctx)).Scan(&v)
		return v, err
	}
}

// revoked makes a revocation in tx known to every cache: on SQLite it raises
// the file's epoch (and dropCachedOn the revocation counter, after the
// commit), on PostgreSQL it sends the revoke notification (with the commit,
// whatever process revokes: the token CLI announces nothing else).
func (s *Store) revoked(tx *gorm.DB) error {
	if s.revokesErr != nil {
		return fmt.Errorf("cannot revoke: a running server would not see it: %w", s.revokesErr)
	}
	if tx.Dialector.Name() == "postgres" {
		return tx.Exec("SELECT pg_notify(?, ?)", NotifyChannel, `{"a":"`+ActionRevoke+`"}`).Error
	}
	var v int64
	if err := tx.Raw("PRAGMA user_version").Scan(&v).Error; err != nil {
		return err
	}
	return tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", v+1)).Error
}

// dropCachedOn, once a revocation committed (err nil), raises the SQLite
// revocation counter, so every process's cache reads again, and drops this
// store's own cache: on PostgreSQL the revoke notification reaches this
// replica's cache only after a round trip through LISTEN, and the revoker
// must not accept what it just revoked in between.
func (s *Store) dropCachedOn(err error) error {
	if err != nil {
		return err
	}
	if s.revokes != nil {
		s.revokes.raise()
	}
	if s.auth != nil {
		s.auth.drop()
	}
	return nil
}

// CacheAuth makes a PostgreSQL store cache authentication, dropping the
// cache at every revocation and resync changes relays (the replica listener
// must feed changes). A SQLite store caches from NewStore on.
func (s *Store) CacheAuth(changes *Changes) {
	if s.auth != nil {
		return
	}
	c := newAuthCache(nil)
	changes.OnRevoke(c.drop)
	s.auth = c
}
