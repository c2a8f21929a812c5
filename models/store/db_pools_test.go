package store_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestSQLiteStatementCaches: GORM's statement cache is on the reader pool only.
// On the one-connection writer it deadlocks: a statement being prepared outside
// a transaction waits for the connection, while the transaction holding it
// waits for that cache entry to be prepared (CI: a login link's transaction
// hung for 30 s against HasOperator at start). The writer's group commits keep
// statements prepared in a cache of their own.
func TestSQLiteStatementCaches(t *testing.T) {
	url := storetest.URL(t, "sqlite")
	w, err := store.OpenDB(url)
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.OpenReadDB(url)
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []*gorm.DB{w, r} {
		if sqlDB, err := db.DB(); err == nil {
			t.Cleanup(func() { sqlDB.Close() })
		}
	}
	if w.PrepareStmt {
		t.Fatal("the writer keeps GORM's statement cache")
	}
	if !r.PrepareStmt {
		t.Fatal("the reader pool lost GORM's statement cache")
	}
}
