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
		Chain: a.Chain, Seq: a.Seq, At: a.CreatedAt.UTC().Format(AuditTimeFormat), RequestID: a.RequestID, Version: a.Version,
		Action: a.Action, Actor: a.Actor, Via: a.Via, Detail: d, PrevHash: a.PrevHash, Hash: a.Hash,
	}
}

// AuditChains is how many chains the trail has, each with its own head row.
// One head serialised every audited write, across replicas too, through the
// commit's WAL flush; with several, each transaction appends to whichever
// chain's head is free, so two replicas' batches commit side by side. A
// database gets the head rows it lacks at migration; more may be added later,
// never fewer.
const AuditChains = 8

// AuditHead is the newest link of one chain, one row per chain (ID is the
// chain's number plus one: the chain from before there were several is chain
// 0, row 1). Appenders lock it, so it is also what serialises the appends to
// that chain.
type AuditHead struct {
	ID   int    `gorm:"primaryKey;autoIncrement:false"`
	Seq  uint64 `gorm:"not null"`
	Hash string `gorm:"size:64;not null"`
	At   string `gorm:"size:40;not null"` // the newest entry's "at"; "" while the chain is empty
}

// TableName keeps the table's name as it was when it had one row.
func (AuditHead) TableName() string { return "audit_head" }

// Chain is the number of the chain h heads.
func (h AuditHead) Chain() uint32 { return uint32(h.ID - 1) }

// lockHead reads a chain's head inside tx, locking it until tx ends: the
// chain tx appends to.
//
// Every appender to a chain must see the entry the previous one wrote, or two
// would take the same seq and fork it. On PostgreSQL the appender takes the
// first head no other transaction holds (FOR UPDATE SKIP LOCKED), so
// concurrent transactions (two replicas' batches) append to different chains
// and neither waits for the other's commit; only when every head is held does
// it queue on chain 0's. Under READ COMMITTED the row it locks is the one its
// predecessor committed, so seq has no gaps (a rolled-back appender leaves the
// head as it was) and no forks (the unique index on chain and seq backs that
// up). A row lock rather than pg_advisory_xact_lock because the row also
// carries the head, so the next seq needs no scan. A transaction that appends
// again gets its own head back or a free one, never waiting while it holds
// one. On SQLite every write transaction begins IMMEDIATE (OpenDB), so the
// database's single writer lock already serialises appenders, across
// processes too, and every entry goes on chain 0.
//
// The lock is held to the commit, so on PostgreSQL every appender takes it
// before any row it changes: a batch of writers locks it at BEGIN
// (groupCommit.headFirst) and holds it while its later jobs lock their rows,
// and a transaction of its own (a push's record) appends before it writes.
// A transaction waiting for a head then holds no row another waits for
// (TestBatchesOfTwoStores). A batch reads the head once and writes it once,
// before its COMMIT (batchTx); its writers' appends in between are only their
// INSERTs.
func lockHead(tx *gorm.DB) (*AuditHead, error) {
	if tx.Dialector.Name() != "postgres" {
		return lockChain(tx, 0)
	}
	h, err := scanHead(tx, "SELECT id, seq, hash, at FROM audit_head ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED", nil)
	if errors.Is(err, sql.ErrNoRows) { // every head is held: queue for chain 0's
		return lockChain(tx, 0)
	}
	return h, err
}

// lockChain reads and locks the head of one chain.
func lockChain(tx *gorm.DB, chain uint32) (*AuditHead, error) {
	// Hand SQL here and in appendAudit: the chain is written at every change,
	// and GORM's reflection was most of an append's cost.
	q := "SELECT id, seq, hash, at FROM audit_head WHERE id = ?"
	if tx.Dialector.Name() == "postgres" {
		q += " FOR UPDATE"
	}
	return scanHead(tx, q, []any{int(chain) + 1})
}

func scanHead(tx *gorm.DB, q string, args []any) (*AuditHead, error) {
	var h AuditHead
	if err := hotScan(tx, q, args, &h.ID, &h.Seq, &h.Hash, &h.At); err != nil {
		if errors.Is(err, sql.ErrNoRows) && args != nil {
			return nil, fmt.Errorf("audit head is missing: the database is not migrated")
		}
		return nil, err
	}
	return &h, nil
}

// appendAudit links a (its chain, seq, prev_hash and hash are set here) to a
// chain and writes it, inside tx.
func appendAudit(tx *gorm.DB, a *Audit) error {
	if bt, ok := tx.Statement.ConnPool.(*batchTx); ok {
		return bt.appendAudit(tx, a)
	}
	h, err := lockHead(tx)
	if err != nil {
		return err
	}
	return appendTo(tx, h, a)
}

// appendTo links a after h, writes it and moves the head row.
func appendTo(tx *gorm.DB, h *AuditHead, a *Audit) error {
	if err := link(h, a); err != nil {
		return err
	}
	args := auditArgs(a)
	if tx.Dialector.Name() == "postgres" {
		// One round trip for the entry and the head: the chain's appenders
		// queue on the head's row lock, so each trip inside it is a trip for all.
		_, err := hotExec(tx, "WITH entry AS ("+insertAudit+") UPDATE audit_head SET seq = ?, hash = ?, at = ? WHERE id = ?",
			append(args, h.Seq, h.Hash, h.At, h.ID)...)
		return err
	}
	if _, err := hotExec(tx, insertAudit, args...); err != nil {
		return err
	}
	return saveHead(tx, h)
}

const insertAudit = "INSERT INTO audits (chain, seq, request_id, version, action, actor, via, detail, created_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// auditArgs are insertAudit's arguments for a.
func auditArgs(a *Audit) []any {
	return []any{a.Chain, a.Seq, a.RequestID, a.Version, a.Action, a.Actor, a.Via, a.Detail, a.CreatedAt, a.PrevHash, a.Hash}
}

// link makes a the entry after h and moves h to it.
func link(h *AuditHead, a *Audit) error {
	a.CreatedAt = a.CreatedAt.UTC().Truncate(time.Microsecond)
	a.Chain, a.Seq, a.PrevHash, a.Hash = h.Chain(), h.Seq+1, h.Hash, ""
	hash, err := a.Entry().ComputeHash()
	if err != nil {
		return fmt.Errorf("audit entry: %w", err)
	}
	a.Hash = hash
	h.Seq, h.Hash, h.At = a.Seq, a.Hash, a.Entry().At
	return nil
}

func saveHead(tx *gorm.DB, h *AuditHead) error {
	_, err := hotExec(tx, "UPDATE audit_head SET seq = ?, hash = ?, at = ? WHERE id = ?", h.Seq, h.Hash, h.At, h.ID)
	return err
}

// migrateAuditChain makes the head rows a database lacks, drops the index
// that made seq unique over the one chain there was (the entries it covered
// are chain 0's, and verify as they did), and chains, once and in id order,
// the rows an older build wrote without seq, on chain 0, so a database from
// before the chain verifies.
func migrateAuditChain(db *gorm.DB) error {
	if m := db.Migrator(); m.HasIndex(&Audit{}, "idx_audits_seq") {
		if err := m.DropIndex(&Audit{}, "idx_audits_seq"); err != nil {
			return fmt.Errorf("drop index idx_audits_seq: %w", err)
		}
	}
	return db.Transaction(func(tx *gorm.DB) error {
		heads := make([]AuditHead, AuditChains)
		for i := range heads {
			heads[i] = AuditHead{ID: i + 1, Hash: ZeroHash}
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&heads).Error; err != nil {
			return err
		}
		h, err := lockChain(tx, 0)
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
