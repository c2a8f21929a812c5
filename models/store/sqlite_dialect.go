package store

import (
	"math"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"
)

// sqliteDialector is libtnb's GORM dialector over the current modernc.org/sqlite
// with one correction to what its migrator reads back: the driver reports every
// TEXT column's length as MaxInt64 once the table has a row, and GORM takes that
// for a changed `size:` and rebuilds the table (copy, drop, rename) at every
// start, on a connection of its own, which the one-writer pool never has.
type sqliteDialector struct{ *sqlite.Dialector }

func newSQLiteDialector(dsn string) gorm.Dialector {
	return sqliteDialector{&sqlite.Dialector{DSN: dsn}}
}

func (d sqliteDialector) Migrator(db *gorm.DB) gorm.Migrator {
	return sqliteMigrator{d.Dialector.Migrator(db)}
}

type sqliteMigrator struct{ gorm.Migrator }

// FullDataTypeOf makes the audit trail's id SQLite's own row id, without
// AUTOINCREMENT: that keyword keeps the table's highest id in
// sqlite_sequence, one more page written by every commit that appends an
// entry, to guarantee ids never reused after a delete, and entries are never
// deleted. A table made by an older build keeps it (the type still reads
// "integer", so nothing is rebuilt).
func (m sqliteMigrator) FullDataTypeOf(field *schema.Field) clause.Expr {
	if field.Schema != nil && field.Schema.Table == "audits" && field.DBName == "id" {
		return clause.Expr{SQL: "integer PRIMARY KEY"}
	}
	return m.Migrator.FullDataTypeOf(field)
}

func (m sqliteMigrator) ColumnTypes(value any) ([]gorm.ColumnType, error) {
	cts, err := m.Migrator.ColumnTypes(value)
	for i, ct := range cts {
		cts[i] = unboundedText{ct}
	}
	return cts, err
}

// unboundedText reports no length where SQLite has none to report.
type unboundedText struct{ columnType }

// columnType names the embedded interface so that its method ColumnType does
// not clash with the field.
type columnType = gorm.ColumnType

func (c unboundedText) Length() (int64, bool) {
	n, ok := c.columnType.Length()
	if n == math.MaxInt64 {
		return 0, false
	}
	return n, ok
}
