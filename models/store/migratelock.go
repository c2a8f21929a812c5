package store

import (
	"log/slog"

	"gorm.io/gorm"
)

// migrateLockKey is the advisory lock that serialises schema migration on
// PostgreSQL ("gatehous" in ASCII).
const migrateLockKey = 0x6761746568617573

// MigrateLocked is Migrate for processes that may start together (replicas, the
// token CLI beside them): on PostgreSQL it holds an advisory lock on one
// connection, because concurrent AutoMigrates race to create the same tables and
// types. On SQLite one immediate transaction takes the database's write lock, so
// a second process waits (busy_timeout) and then finds the tables made.
func MigrateLocked(db *gorm.DB) error {
	if db.Dialector.Name() != "postgres" {
		return db.Transaction(func(tx *gorm.DB) error { return Migrate(tx) })
	}
	return db.Connection(func(conn *gorm.DB) error {
		if err := conn.Exec("SELECT pg_advisory_lock(?)", migrateLockKey).Error; err != nil {
			return err
		}
		defer func() {
			if err := conn.Exec("SELECT pg_advisory_unlock(?)", migrateLockKey).Error; err != nil {
				slog.Error("release migrate lock", "err", err)
			}
		}()
		return Migrate(conn)
	})
}
