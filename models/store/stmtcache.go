package store

import (
	"database/sql"
	"sync"
)

// maxStmts bounds the prepared statements kept for the writer: GORM builds a
// distinct string for each length of an IN list, and those need not stay.
const maxStmts = 512

// stmtCache keeps the writer's statements prepared across transactions.
// GORM's own PrepareStmt cannot: a statement it prepares inside a transaction
// belongs to that transaction and is closed at its COMMIT, so every batch
// parsed and planned its SQL again (a quarter of a filing's CPU). A statement
// prepared on the pool instead is kept per connection, and database/sql hands
// a transaction on the same connection that prepared statement as it is. The
// pool has one connection, which a transaction holds, so a string first seen
// inside a transaction runs unprepared there and is prepared on the pool after
// the COMMIT (prepareSeen), when the connection is free.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	seen  map[string]struct{} // met in a transaction, not prepared yet
}

func newStmtCache() *stmtCache {
	return &stmtCache{stmts: map[string]*sql.Stmt{}, seen: map[string]struct{}{}}
}

// get is query's prepared statement, or nil (always, for a nil cache).
func (c *stmtCache) get(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stmts[query]
	if st == nil && len(c.stmts)+len(c.seen) < maxStmts {
		c.seen[query] = struct{}{}
	}
	return st
}

// prepareSeen prepares on db the statements met since the last call. A
// statement that fails to prepare is only not cached: it ran (and reported
// its error) in its transaction.
func (c *stmtCache) prepareSeen(db *sql.DB) {
	c.mu.Lock()
	seen := c.seen
	if len(seen) == 0 {
		c.mu.Unlock()
		return
	}
	c.seen = map[string]struct{}{}
	c.mu.Unlock()
	for q := range seen {
		st, err := db.Prepare(q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.stmts[q] == nil {
			c.stmts[q] = st
			st = nil
		}
		c.mu.Unlock()
		if st != nil {
			st.Close()
		}
	}
}
