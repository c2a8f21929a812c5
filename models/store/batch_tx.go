package store

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// batchTx is a group commit's transaction as GORM's connection pool. Being a
// gorm.TxCommitter, GORM treats it as a transaction in progress: a nested
// Transaction becomes a savepoint. On SQLite each statement runs through the
// writer's statement cache (on PostgreSQL cache is nil).
//
// It also holds the head of the audit chain the batch appends to, as the
// batch has moved it: read once
// (at BEGIN on PostgreSQL, at the first append on SQLite), then each append
// is only its INSERT, and the head row is written once, before the COMMIT
// (saveBatchHead). The head travels with the connection, not a context, so no
// session a writer derives from its tx can miss it and read the stale row.
type batchTx struct {
	tx    *sql.Tx
	cache *stmtCache
	head  *AuditHead // the head as moved so far; nil: not read yet
	read  *AuditHead // the head as read from the row
	// notes are the NOTIFY payloads the batch's writers announced
	// (PostgreSQL), sent in one statement just before the COMMIT: a round trip
	// per batch, not per writer.
	notes []string
}

var (
	_ gorm.ConnPool    = (*batchTx)(nil)
	_ gorm.TxCommitter = (*batchTx)(nil)
)

func (t *batchTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, query)
}

func (t *batchTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.cache.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

func (t *batchTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.cache.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t *batchTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.cache.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t *batchTx) Commit() error   { return t.tx.Commit() }
func (t *batchTx) Rollback() error { return t.tx.Rollback() }

// lockHead reads and locks the head row, once per batch.
func (t *batchTx) lockHead(tx *gorm.DB) error {
	h, err := lockHead(tx)
	if err != nil {
		return err
	}
	t.head, t.read = h, h
	return nil
}

// appendAudit links a to the batch's head and inserts it; the head row is
// written by saveBatchHead.
func (t *batchTx) appendAudit(tx *gorm.DB, a *Audit) error {
	if t.head == nil {
		if err := t.lockHead(tx); err != nil {
			return err
		}
	}
	h := *t.head
	if err := link(&h, a); err != nil {
		return err
	}
	if _, err := hotExec(tx, insertAudit, auditArgs(a)...); err != nil {
		return err
	}
	t.head = &h
	return nil
}

// saveBatchHead writes the head row when the batch moved it.
func (t *batchTx) saveBatchHead(tx *gorm.DB) error {
	if t.head == nil || t.head == t.read {
		return nil
	}
	return saveHead(tx, t.head)
}

// notify queues the NOTIFY of payload with the batch's own.
func (t *batchTx) notify(payload string) { t.notes = append(t.notes, payload) }

// sendNotes hands PostgreSQL the batch's NOTIFYs in one statement, in the
// order they were announced (unnest keeps the array's order); PostgreSQL
// delivers them at the COMMIT, or drops them with a rollback.
func (t *batchTx) sendNotes(tx *gorm.DB) error {
	if len(t.notes) == 0 {
		return nil
	}
	_, err := hotExec(tx, "SELECT pg_notify(?, p) FROM unnest(?::text[]) AS p", NotifyChannel, t.notes)
	return err
}
