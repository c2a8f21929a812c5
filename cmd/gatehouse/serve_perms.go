//go:build !agent

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehousehq/gatehouse/models/store"
)

// sqliteFile is the file of a SQLite database URL; false for PostgreSQL and
// an in-memory database.
func sqliteFile(database string) (string, bool) {
	path, ok := store.SQLitePath(database)
	if !ok {
		return "", false
	}
	path, _, _ = strings.Cut(path, "?")
	if path == "" || strings.Contains(path, ":memory:") {
		return "", false
	}
	return path, true
}

// createDatabaseFile makes a new SQLite database file readable and writable
// by its owner only (SQLite would make it with the umask's mode, often
// readable by all, and its -wal and -shm files follow the file's mode).
// Whoever can open the file can make themselves an operator.
func createDatabaseFile(database string) error {
	path, ok := sqliteFile(database)
	if !ok {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrNotExist):
		return nil // there already, or no directory: opening it reports that
	case err != nil:
		return err
	}
	return f.Close()
}

// warnLoosePermissions says, once at start, when the database file or its
// directory may be read or written by the group or by others: any of them
// could read the token hashes and sessions, or write themselves an operator
// token.
func warnLoosePermissions(database string, stderr io.Writer) {
	path, ok := sqliteFile(database)
	if !ok {
		return
	}
	for _, c := range []struct{ path, what, fix string }{
		{filepath.Dir(path), "data directory", "chmod 700"},
		{path, "database file", "chmod 600"},
	} {
		fi, err := os.Stat(c.path)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		can := "read"
		if fi.Mode().Perm()&0o022 != 0 {
			can = "change"
		}
		fmt.Fprintf(stderr, "gatehouse: warning: the %s %s has mode %s: users other than its owner can %s it, "+
			"and whoever can write the database can make themselves an operator (%s %s)\n", c.what, c.path, fi.Mode().Perm(), can, c.fix, c.path)
	}
}
