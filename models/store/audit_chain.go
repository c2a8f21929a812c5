package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gatehousehq/gatehouse/api"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ZeroHash is the prev_hash of the first entry.
var ZeroHash = strings.Repeat("0", 64)

// AuditTimeFormat is how an entry's "at" is written: UTC, RFC 3339 with exactly
// six fraction digits (the microseconds both databases keep), so an entry read
// back from either database, or from an export, hashes to the same bytes.
const AuditTimeFormat = "2006-01-02T15:04:05.000000Z"

// AuditEntry is one entry as the API, the export and the hash see it.
type AuditEntry = api.AuditEntry

// Entry is the row as a chain entry.
func (a Audit) Entry() AuditEntry {
	d := json.RawMessage(a.Detail)
	if a.Detail == "" {
		d = json.RawMessage("{}")
	}
	return AuditEntry{
		Seq: a.Seq, At: a.CreatedAt.UTC().Format(AuditTimeFormat), RequestID: a.RequestID, Version: a.Version,
		Action: a.Action, Actor: a.Actor, Via: a.Via, Detail: d, PrevHash: a.PrevHash, Hash: a.Hash,
	}
}

// AuditHead is the newest link of the chain, one row (ID 1). Appenders lock it,
// so it is also what serialises them.
type AuditHead struct {
	ID   int    `gorm:"primaryKey;autoIncrement:false"`
	Seq  uint64 `gorm:"not null"`
	Hash string `gorm:"size:64;not null"`
	At   string `gorm:"size:40;not null"` // the newest entry's "at"; "" while the chain is empty
}

// TableName keeps the one-row table's name singular.
func (AuditHead) TableName() string { return "audit_head" }

// lockHead reads the head inside tx, locking it until tx ends.
//
// Every appender must see the entry the previous one wrote, or two would take
// the same seq and fork the chain. On PostgreSQL, with replicas, SELECT … FOR
// UPDATE of the one head row makes appenders queue; under READ COMMITTED the
// waiter then reads the row its predecessor committed, so seq has no gaps (a
// rolled-back appender leaves the head as it was) and no forks (the unique
// index on seq backs that up). A row lock rather than pg_advisory_xact_lock
// because the row also carries the head, so the next seq needs no scan. On
// SQLite every write transaction begins IMMEDIATE (OpenDB), so the database's
// single writer lock already serialises appenders, across processes too.
//
// The lock is held to the commit, so on PostgreSQL every appender takes it
// before any row it changes: a batch of writers locks it at BEGIN
// (groupCommit.headFirst) and holds it while its later jobs lock their rows,
// and a transaction of its own (a push's record) appends before it writes.
// One order for all keeps appenders deadlock-free (TestBatchesOfTwoStores).
// A batch reads the head once and writes it once, before its COMMIT
// (batchTx); its writers' appends in between are only their INSERTs.
func lockHead(tx *gorm.DB) (*AuditHead, error) {
	// Hand SQL here and in appendAudit: the chain is written at every change,
	// and GORM's reflection was most of an append's cost.
	q := "SELECT seq, hash, at FROM audit_head WHERE id = 1"
	if tx.Dialector.Name() == "postgres" {
		q += " FOR UPDATE"
	}
	h := AuditHead{ID: 1}
	if err := hotScan(tx, q, nil, &h.Seq, &h.Hash, &h.At); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("audit head is missing: the database is not migrated")
		}
		return nil, err
	}
	return &h, nil
}

// appendAudit links a (its seq, prev_hash and hash are set here) to the chain
// and writes it, inside tx.
func appendAudit(tx *gorm.DB, a *Audit) error {
	if bt, ok := tx.Statement.ConnPool.(*batchTx); ok {
		return bt.appendAudit(tx, a)
	}
	h, err := lockHead(tx)
	if err != nil {
		return err
	}
	if err := link(h, a); err != nil {
		return err
	}
	args := auditArgs(a)
	if tx.Dialector.Name() == "postgres" {
		// One round trip for the entry and the head: every writer queues on
		// the head's row lock, so each trip inside it is a trip for all.
		_, err := hotExec(tx, "WITH entry AS ("+insertAudit+") UPDATE audit_head SET seq = ?, hash = ?, at = ? WHERE id = 1",
			append(args, h.Seq, h.Hash, h.At)...)
		return err
	}
	if _, err := hotExec(tx, insertAudit, args...); err != nil {
		return err
	}
	return saveHead(tx, h)
}

const insertAudit = "INSERT INTO audits (seq, request_id, version, action, actor, via, detail, created_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// auditArgs are insertAudit's arguments for a.
func auditArgs(a *Audit) []any {
	return []any{a.Seq, a.RequestID, a.Version, a.Action, a.Actor, a.Via, a.Detail, a.CreatedAt, a.PrevHash, a.Hash}
}

// link makes a the entry after h and moves h to it.
func link(h *AuditHead, a *Audit) error {
	a.CreatedAt = a.CreatedAt.UTC().Truncate(time.Microsecond)
	a.Seq, a.PrevHash, a.Hash = h.Seq+1, h.Hash, ""
	hash, err := a.Entry().ComputeHash()
	if err != nil {
		return fmt.Errorf("audit entry: %w", err)
	}
	a.Hash = hash
	h.Seq, h.Hash, h.At = a.Seq, a.Hash, a.Entry().At
	return nil
}

func saveHead(tx *gorm.DB, h *AuditHead) error {
	_, err := hotExec(tx, "UPDATE audit_head SET seq = ?, hash = ?, at = ? WHERE id = 1", h.Seq, h.Hash, h.At)
	return err
}

// migrateAuditChain makes the head row and chains, once and in id order, the
// rows an older build wrote without seq, so a database from before the chain
// verifies.
func migrateAuditChain(db *gorm.DB) error {
	return db.Transaction(func(tx *gorm.DB) error {
		head := AuditHead{ID: 1, Hash: ZeroHash}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&head).Error; err != nil {
			return err
		}
		h, err := lockHead(tx)
		if err != nil {
			return err
		}
		moved := false
		for {
			var rows []Audit
			if err := tx.Where("seq IS NULL OR seq = 0").Order("id").Limit(500).Find(&rows).Error; err != nil {
				return err
			}
			if len(rows) == 0 {
				break
			}
			for i := range rows {
				a := &rows[i]
				if err := link(h, a); err != nil {
					return err
				}
				if err := tx.Model(&Audit{}).Where("id = ?", a.ID).
					Updates(map[string]any{"seq": a.Seq, "prev_hash": a.PrevHash, "hash": a.Hash, "created_at": a.CreatedAt}).Error; err != nil {
					return err
				}
			}
			moved = true
		}
		if !moved {
			return nil
		}
		return saveHead(tx, h)
	})
}
