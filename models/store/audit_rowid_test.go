package store_test

import (
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// On SQLite the audit trail's id is the row id without AUTOINCREMENT, so an
// append writes no sqlite_sequence page; a table an older build made keeps
// AUTOINCREMENT, and both chain and verify alike.
func TestAuditRowID(t *testing.T) {
	auditDDL := func(t *testing.T, s *store.Store) string {
		t.Helper()
		var ddl string
		if err := s.DB.Raw("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audits'").Scan(&ddl).Error; err != nil {
			t.Fatal(err)
		}
		return ddl
	}
	appendAndVerify := func(t *testing.T, s *store.Store) {
		t.Helper()
		tok, _, err := s.CreateToken(ctx, models.RoleAgent, "rowid")
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := s.CreateRequest(ctx, tok.Principal(), models.NewRequest{Kind: models.KindApproval, Title: "t", Options: allowDeny()}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:o", Via: models.ViaAPI}); err != nil {
			t.Fatal(err)
		}
		trail, err := s.AuditTrail(ctx, r.ID)
		if err != nil || len(trail) != 2 || trail[0].ID >= trail[1].ID {
			t.Fatalf("trail %+v, %v: want two entries, ids rising", trail, err)
		}
		if _, err := s.VerifyAudit(ctx, nil); err != nil {
			t.Fatalf("verify: %v", err)
		}
	}
	t.Run("a new database has no AUTOINCREMENT on audits", func(t *testing.T) {
		s, _ := storetest.Store(t, "sqlite")
		if ddl := auditDDL(t, s); !strings.Contains(ddl, "`id` integer PRIMARY KEY,") {
			t.Fatalf("audits: %s", ddl)
		}
		appendAndVerify(t, s)
	})
	t.Run("an older table keeps it", func(t *testing.T) {
		db := storetest.Open(t, storetest.URL(t, "sqlite"))
		const old = "CREATE TABLE `audits` (`id` integer PRIMARY KEY AUTOINCREMENT,`chain` integer NOT NULL DEFAULT 0,`seq` integer,`request_id` text,`version` integer NOT NULL,`action` text NOT NULL,`actor` text NOT NULL,`via` text,`detail` text,`created_at` datetime NOT NULL,`prev_hash` text,`hash` text)"
		if err := db.Exec(old).Error; err != nil {
			t.Fatal(err)
		}
		if err := store.Migrate(db); err != nil {
			t.Fatal(err)
		}
		s := store.NewStore(db, store.NewChanges())
		if ddl := auditDDL(t, s); !strings.Contains(ddl, "AUTOINCREMENT") {
			t.Fatalf("audits rebuilt: %s", ddl)
		}
		appendAndVerify(t, s)
	})
}
