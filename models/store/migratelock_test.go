package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/internal/testkit"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// Replicas started together migrate one fresh database at once.
func TestMigrateLockedConcurrently(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		url := storetest.URL(t, dialect)
		const n = 4
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			db := storetest.Open(t, url)
			wg.Go(func() { errs[i] = store.MigrateLocked(db) })
		}
		testkit.Wait(t, &wg, "the concurrent calls to finish")
		for i, err := range errs {
			if err != nil {
				t.Errorf("migration %d: %v", i, err)
			}
		}
	})
}

// A database made when pending ids were unique across owners is re-keyed, its
// grants kept, so another owner's id is free.
func TestMigrateScopesPendingIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		db := storetest.Open(t, storetest.URL(t, dialect))
		// The old shape: grants keyed on pending_id alone, requests' pending_id unique.
		ts := "timestamptz"
		if dialect == "sqlite" {
			ts = "datetime"
		}
		old := []string{
			`CREATE TABLE grants (pending_id varchar(64) PRIMARY KEY, digest varchar(64) NOT NULL, owner_id varchar(40) NOT NULL,
				request_id varchar(40) NOT NULL, sandbox varchar(128) NOT NULL, policy varchar(128) NOT NULL, middleware varchar(128) NOT NULL,
				method varchar(32) NOT NULL, host varchar(255) NOT NULL, port bigint NOT NULL, path text NOT NULL, query text NOT NULL,
				body_sha256 varchar(64) NOT NULL, state varchar(16) NOT NULL, created_at ` + ts + ` NOT NULL, expires_at ` + ts + ` NOT NULL, claimed_at ` + ts + `)`,
			"CREATE INDEX idx_grants_digest ON grants (digest, owner_id)",
			"CREATE UNIQUE INDEX idx_grants_request_id ON grants (request_id)",
		}
		for _, q := range old {
			if err := db.Exec(q).Error; err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now().UTC()
		if err := db.Table("grants").Create(map[string]any{"pending_id": "kept_id", "digest": "d", "owner_id": "tok_a", "request_id": "req_a",
			"sandbox": "s", "policy": "p", "middleware": "m", "method": "PUT", "host": "h", "port": 443, "path": "/", "query": "",
			"body_sha256": "b", "state": "pending", "created_at": now, "expires_at": now}).Error; err != nil {
			t.Fatal(err)
		}
		if err := store.Migrate(db); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("CREATE UNIQUE INDEX idx_requests_pending_id ON requests (pending_id)").Error; err != nil {
			t.Fatal(err)
		}
		if err := store.Migrate(db); err != nil {
			t.Fatal(err)
		}
		m := db.Migrator()
		if m.HasIndex(&models.Request{}, "idx_requests_pending_id") || !m.HasIndex(&models.Request{}, "idx_requests_owner_pending_set") {
			t.Fatal("requests' pending ids are still unique across owners")
		}
		var kept models.Grant
		if err := db.Where("owner_id = ? AND pending_id = ?", "tok_a", "kept_id").Take(&kept).Error; err != nil || kept.RequestID != "req_a" {
			t.Fatalf("old grant: %+v %v", kept, err)
		}
		other := kept
		other.OwnerID, other.RequestID = "tok_b", "req_b"
		if err := db.Create(&other).Error; err != nil {
			t.Fatalf("another owner's grant with the same pending id: %v", err)
		}
		if err := db.Create(&kept).Error; err == nil {
			t.Fatal("the same owner's pending id twice was accepted")
		}
	})
}

// A second start finds the schema as the first left it: nothing is rebuilt.
// The dialector once read every TEXT column's length back as MaxInt64, so
// each start copied, dropped and renamed the tables that had rows, on a
// connection the one-writer pool does not have (it hung).
// SQLite only: the rebuild is SQLite's way of altering a column.
func TestMigrateAgainRebuildsNothing(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		url := storetest.URL(t, "sqlite")
		rootpages := func() map[string]int {
			db, err := store.OpenDB(url)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if sqlDB, err := db.DB(); err == nil {
					sqlDB.Close()
				}
			}()
			done := make(chan error, 1)
			go func() { done <- store.MigrateLocked(db) }()
			if err := testkit.Recv(t, done, "the migration"); err != nil {
				t.Fatal(err)
			}
			var rows []struct {
				Name     string
				Rootpage int
			}
			if err := db.Raw("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'").Scan(&rows).Error; err != nil {
				t.Fatal(err)
			}
			m := map[string]int{}
			for _, r := range rows {
				m[r.Name] = r.Rootpage
			}
			return m
		}
		first := rootpages()
		db, err := store.OpenDB(url)
		if err != nil {
			t.Fatal(err)
		}
		s := store.NewStore(db, store.NewChanges())
		file(t, s, agent(t, s, "a"), models.NewRequest{}) // rows in the tables, the audit head's among them
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
		second := rootpages()
		for name, page := range first {
			if second[name] != page {
				t.Errorf("table %s was rebuilt at the second start (root page %d, then %d)", name, page, second[name])
			}
		}
	})
}
