// Package storetest opens real databases for tests: a SQLite file in the test's
// temporary directory, and a fresh PostgreSQL database when one is reachable.
package storetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// PostgresEnv names the variable holding an admin URL of a PostgreSQL server that
// tests may create databases on.
const PostgresEnv = "GATEHOUSE_TEST_POSTGRES"

// Dialects are the databases a store suite runs on.
var Dialects = []string{"sqlite", "postgres"}

// URL returns a database URL of the dialect for one test, creating a fresh
// database on PostgreSQL. Without PostgreSQL the test is skipped, and under
// CI=true it fails instead.
func URL(t testing.TB, dialect string) string {
	t.Helper()
	if dialect == "sqlite" {
		return "sqlite:" + t.TempDir() + "/gatehouse.db"
	}
	admin := os.Getenv(PostgresEnv)
	if admin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is missing: %s is not set (CI must run every test)", PostgresEnv)
		}
		testkit.Skipf(t, "PostgreSQL is missing: set %s to an admin URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable); .ci/run does", PostgresEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to PostgreSQL at %s: %v", PostgresEnv, err)
	}
	defer conn.Close(context.Background())
	name := strings.ToLower(models.NewID("gh_test_"))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	if cfg.Password != "" {
		u = fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, name)
	}
	return u
}

// DB opens and migrates a database of the dialect for one test.
func DB(t testing.TB, dialect string) *gorm.DB {
	t.Helper()
	return Migrated(t, URL(t, dialect))
}

// Open opens the database at url, as it is, for one test: its pool is
// closed when the test ends.
func Open(t testing.TB, url string) *gorm.DB {
	t.Helper()
	db, err := store.OpenDB(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}

// Migrated opens and migrates the database at url for one test: another
// replica's pool on a database a test has already opened.
func Migrated(t testing.TB, url string) *gorm.DB {
	t.Helper()
	db := Open(t, url)
	if err := store.Migrate(db); err != nil {
		t.Fatal(err)
	}
	return db
}

// Store returns a store on a fresh database of the dialect, announcing through a
// new in-process Changes.
func Store(t testing.TB, dialect string) (*store.Store, *store.Changes) {
	t.Helper()
	ch := store.NewChanges()
	return store.NewStore(DB(t, dialect), ch), ch
}

// Each runs f as a named subtest on every dialect.
func Each(t *testing.T, f func(t *testing.T, dialect string)) {
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) { f(t, d) })
	}
}

// AppendOnChain appends an entry for requestID to one chain of s's audit
// trail as a writer that found that chain's head free does (its head row
// locked, the entry linked after it, the head moved), so tests on either
// database can hold entries on several chains. It answers the entry.
func AppendOnChain(t testing.TB, s *store.Store, chain uint32, requestID string) store.AuditEntry {
	t.Helper()
	var e store.AuditEntry
	err := s.DB.Transaction(func(tx *gorm.DB) error {
		q := "SELECT seq, hash FROM audit_head WHERE id = ?"
		if tx.Dialector.Name() == "postgres" {
			q += " FOR UPDATE"
		}
		var h struct {
			Seq  uint64
			Hash string
		}
		if err := tx.Raw(q, int(chain)+1).Scan(&h).Error; err != nil {
			return err
		}
		if h.Hash == "" {
			return fmt.Errorf("no head row for chain %d", chain)
		}
		a := store.Audit{Chain: chain, Seq: h.Seq + 1, RequestID: requestID, Version: 1, Action: "forward", Actor: "system",
			Via: "test", Detail: `{"attempt":1}`, CreatedAt: s.Now().UTC().Truncate(time.Microsecond), PrevHash: h.Hash}
		hash, err := a.Entry().ComputeHash()
		if err != nil {
			return err
		}
		a.Hash = hash
		e = a.Entry()
		if err := tx.Create(&a).Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE audit_head SET seq = ?, hash = ?, at = ? WHERE id = ?", e.Seq, e.Hash, e.At, int(chain)+1).Error
	})
	if err != nil {
		t.Fatalf("append on chain %d: %v", chain, err)
	}
	return e
}
