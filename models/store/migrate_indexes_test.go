package store_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// A database from before requests' nullable columns had partial indexes loses
// the full ones and gets the partial ones, which still keep an owner's
// idempotency keys and pending ids unique while any number of rows leave them
// NULL.
func TestMigratePartialIndexes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		db := storetest.DB(t, dialect)
		for _, q := range []string{
			"CREATE INDEX idx_requests_runtime_id ON requests (runtime_id)",
			"CREATE UNIQUE INDEX idx_requests_owner_pending ON requests (owner_id, pending_id)",
			"CREATE UNIQUE INDEX idx_requests_idem ON requests (owner_id, idempotency_key)",
			"CREATE INDEX idx_requests_hold_until ON requests (hold_until)",
		} {
			if err := db.Exec(q).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := store.Migrate(db); err != nil {
			t.Fatal(err)
		}
		m := db.Migrator()
		for _, old := range []string{"idx_requests_runtime_id", "idx_requests_owner_pending", "idx_requests_idem", "idx_requests_hold_until"} {
			if m.HasIndex(&models.Request{}, old) {
				t.Errorf("%s is still there", old)
			}
		}
		for _, now := range []string{"idx_requests_runtime_set", "idx_requests_owner_pending_set", "idx_requests_idem_set", "idx_requests_hold_set"} {
			if !m.HasIndex(&models.Request{}, now) {
				t.Errorf("%s is missing", now)
			}
		}
		at := time.Now().UTC()
		s := func(v string) *string { return &v }
		row := func(id string, key, pending *string) *models.Request {
			return &models.Request{ID: id, Kind: models.KindQuestion, Status: models.StatusOpen, Version: 1, Title: "t", OwnerID: "tok_a",
				CreatedBy: "agent:a", CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour), ActuationState: "none",
				IdempotencyKey: key, PendingID: pending}
		}
		t.Run("nulls_any_number", func(t *testing.T) {
			for _, id := range []string{"req_n1", "req_n2", "req_n3"} {
				if err := db.Create(row(id, nil, nil)).Error; err != nil {
					t.Fatal(err)
				}
			}
		})
		t.Run("idempotency_key_unique", func(t *testing.T) {
			if err := db.Create(row("req_k1", s("k"), nil)).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Create(row("req_k2", s("k"), nil)).Error; err == nil {
				t.Error("the same owner's idempotency key twice was accepted")
			}
		})
		t.Run("pending_id_unique", func(t *testing.T) {
			if err := db.Create(row("req_p1", nil, s("p"))).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Create(row("req_p2", nil, s("p"))).Error; err == nil {
				t.Error("the same owner's pending id twice was accepted")
			}
		})
	})
}
