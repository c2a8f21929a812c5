package store

import (
	"sync/atomic"

	"gorm.io/gorm"
)

// A revocation must stop the next call, whichever process made it (the
// server, or the token CLI beside it). On SQLite every revoker raises a
// counter in a small file beside the database, `<database>-revoked`, once
// its transaction has committed; every process that opens the database maps
// the file, so a call checks for revocations with one memory load rather than
// a read transaction (after any commit, a read transaction's start reloads
// the reader's view of the log: ~25 µs of every call). The database stays
// the record: the counter only says "read again", and a server starts with
// nothing cached. Like the -wal and -shm files, the file belongs to the
// database: it is made with the database's mode and owner, and removing it
// while a server runs keeps that server from seeing later revocations.

// revokeSignal is the counter a SQLite database's revokers raise.
type revokeSignal struct {
	n *uint64 // in a shared mapping of the file, or in memory (memoryRevokes)
}

func (r *revokeSignal) load() int64 { return int64(atomic.LoadUint64(r.n)) }

func (r *revokeSignal) raise() { atomic.AddUint64(r.n, 1) }

// memoryRevokes is the counter of a database no other process can open (an
// in-memory one).
func memoryRevokes() *revokeSignal { return &revokeSignal{n: new(uint64)} }

// sqliteFile is the file of db's main database, "" for an in-memory one.
func sqliteFile(db *gorm.DB) (string, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return "", err
	}
	var file string
	err = sqlDB.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file)
	return file, err
}

// sqliteRevokes is the revocation counter of db's file: mapped from
// `<file>-revoked`, or in memory for an in-memory database.
func sqliteRevokes(db *gorm.DB) (*revokeSignal, error) {
	file, err := sqliteFile(db)
	if err != nil {
		return nil, err
	}
	if file == "" {
		return memoryRevokes(), nil
	}
	return mapRevokes(file)
}
