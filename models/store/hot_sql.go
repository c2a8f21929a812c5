package store

import (
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// The hand-written statements of the hot paths (a request's read, insert and
// decision, the audit chain's append) run on tx's connection as they are,
// past GORM's statement builder and callbacks: in the file-and-decide profile
// those were nearly a quarter of each statement's CPU, for SQL that needs
// none of it.
// What GORM would still have done is done here: `?` becomes `$n` on
// PostgreSQL, and an error is translated (a duplicate key stays
// gorm.ErrDuplicatedKey) when the store translates errors.

// hotExec runs the statement q with args in tx.
func hotExec(tx *gorm.DB, q string, args ...any) (sql.Result, error) {
	res, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context, bindVars(tx, q), args...)
	if err != nil {
		return nil, translated(tx, err)
	}
	return res, nil
}

// hotScan runs the query q with args in tx and scans its one row into dest;
// no row is sql.ErrNoRows.
func hotScan(tx *gorm.DB, q string, args []any, dest ...any) error {
	err := tx.Statement.ConnPool.QueryRowContext(tx.Statement.Context, bindVars(tx, q), args...).Scan(dest...)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return translated(tx, err)
	}
	return err
}

func translated(tx *gorm.DB, err error) error {
	if t, ok := tx.Dialector.(gorm.ErrorTranslator); ok && tx.Config.TranslateError {
		return t.Translate(err)
	}
	return err
}

// bindVars is q with its placeholders in tx's dialect: as written (?) on
// SQLite, $1, $2, … on PostgreSQL (made at each call: next to a round trip to
// the server it costs nothing worth a cache). The hot statements have no ?
// inside a literal, so every ? is a placeholder.
func bindVars(tx *gorm.DB, q string) string {
	if tx.Dialector.Name() != "postgres" {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + strings.Count(q, "?"))
	for i := 1; ; i++ {
		j := strings.IndexByte(q, '?')
		if j < 0 {
			b.WriteString(q)
			return b.String()
		}
		b.WriteString(q[:j])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(i))
		q = q[j+1:]
	}
}
