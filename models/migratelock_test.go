package models_test

import (
	"sync"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/modelstest"
)

// Replicas started together migrate one fresh database at once.
func TestMigrateLockedConcurrently(t *testing.T) {
	modelstest.Each(t, func(t *testing.T, dialect string) {
		url := modelstest.URL(t, dialect)
		const n = 4
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			db, err := models.OpenDB(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if sqlDB, err := db.DB(); err == nil {
					sqlDB.Close()
				}
			})
			wg.Go(func() { errs[i] = models.MigrateLocked(db) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("migration %d: %v", i, err)
			}
		}
	})
}
