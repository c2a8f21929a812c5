//go:build !agent

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gatehousehq/gatehouse/app"
	"github.com/gatehousehq/gatehouse/models/store"
)

// envReader reads typed environment values and keeps every bad one, so a
// command stops with a message naming it instead of running on the default.
type envReader struct{ errs []error }

func (e *envReader) Int(name string, def int) int {
	v := env(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a whole number", name, v))
		return def
	}
	return n
}

func (e *envReader) Float(name string, def float64) float64 {
	v := env(name, "")
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a number", name, v))
		return def
	}
	return f
}

func (e *envReader) Duration(name string, def time.Duration) time.Duration {
	v := env(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q is not a duration (e.g. 90s, 1h)", name, v))
		return def
	}
	return d
}

// Err is every bad value read, or nil.
func (e *envReader) Err() error { return errors.Join(e.errs...) }

// checkPositive refuses a zero or negative value of the named flags (from a
// flag or the environment).
func checkPositive(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		f := fs.Lookup(n)
		switch v := f.Value.(flag.Getter).Get().(type) {
		case int:
			if v <= 0 {
				return fmt.Errorf("--%s must be above zero, got %d", n, v)
			}
		case float64:
			if v <= 0 {
				return fmt.Errorf("--%s must be above zero, got %g", n, v)
			}
		case time.Duration:
			if v <= 0 {
				return fmt.Errorf("--%s must be above zero, got %s", n, v)
			}
		}
	}
	return nil
}

// defaultDatabase is the database every command uses unless told otherwise:
// GATEHOUSE_DATABASE, else gatehouse.db in the user's data directory
// ($XDG_DATA_HOME/gatehouse, else ~/.local/share/gatehouse), so it does not
// depend on the directory a command runs in.
func defaultDatabase() string {
	if v := env("GATEHOUSE_DATABASE", ""); v != "" {
		return v
	}
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "sqlite:gatehouse.db"
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return "sqlite:" + filepath.Join(dir, "gatehouse", "gatehouse.db")
}

// makeDatabaseDir creates the default database's directory (serve only): the
// data directory is ours to make; any other missing directory is an error
// OpenDB reports.
func makeDatabaseDir(database string) error {
	path, ok := store.SQLitePath(database)
	if !ok || database != defaultDatabase() || env("GATEHOUSE_DATABASE", "") != "" {
		return nil
	}
	return os.MkdirAll(filepath.Dir(path), 0o700)
}

// databaseFlags adds --database and --create to a command other than serve.
func databaseFlags(fs *flag.FlagSet) (database *string, create *bool) {
	database = fs.String("database", defaultDatabase(), "database URL (GATEHOUSE_DATABASE)")
	create = fs.Bool("create", false, "create the database if it does not exist")
	return database, create
}

// openStore opens the database for a command other than serve: it refuses to
// make a new one unless create is set.
func openStore(database string, create bool) (*store.Store, func(), error) {
	if create {
		if err := os.MkdirAll(filepath.Dir(sqlitePathOr(database)), 0o700); err != nil {
			return nil, nil, err
		}
	}
	return app.OpenStore(database, nil, create)
}

func sqlitePathOr(database string) string {
	if p, ok := store.SQLitePath(database); ok {
		return p
	}
	return "."
}

// parseInterspersed is parse for flags that may come before or after
// positional arguments ("token revoke NAME --database X"), which flag.Parse
// alone stops at. It returns the positional arguments.
func (f *flagSet) parseInterspersed(args []string) ([]string, error) {
	var positional []string
	for {
		if err := f.parse(args); err != nil {
			return nil, err
		}
		if f.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, f.Arg(0))
		args = f.Args()[1:]
	}
}
