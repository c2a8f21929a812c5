package models_test

import (
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/modelstest"
)

// storeOn opens a second store on the database at url, as another replica (or
// another process on the SQLite file) would.
func storeOn(t *testing.T, url string) *models.Store {
	t.Helper()
	db, err := models.OpenDB(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	if err := models.Migrate(db); err != nil {
		t.Fatal(err)
	}
	return models.NewStore(db, models.NewChanges())
}

// TestDecideOnAGuess: a store decides on the record it committed last without
// reading it back, and another store changing the request in between never
// makes that guess decide wrongly or refuse what the database would take.
func TestDecideOnAGuess(t *testing.T) {
	modelstest.Each(t, func(t *testing.T, dialect string) {
		url := modelstest.URL(t, dialect)
		a, b := storeOn(t, url), storeOn(t, url)
		p := agent(t, a, "a1")

		t.Run("a filing is guessed at, a decision drops it", func(t *testing.T) {
			r := file(t, a, p, models.NewRequest{})
			if !models.OpenCached(a, r.ID) {
				t.Fatal("the filing's record is not kept")
			}
			if _, err := a.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:a", Via: "api"}); err != nil {
				t.Fatal(err)
			}
			if models.OpenCached(a, r.ID) {
				t.Error("a decided request is still kept")
			}
		})

		t.Run("decided elsewhere: already decided, the other decision stands", func(t *testing.T) {
			r := file(t, a, p, models.NewRequest{})
			if _, err := b.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "deny", By: "operator:b", Via: "api"}); err != nil {
				t.Fatal(err)
			}
			_, err := a.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:a", Via: "api"})
			if models.ErrorCode(err) != models.ECodeAlreadyDecided {
				t.Fatalf("decision on the stale guess: %v", err)
			}
			got, _ := b.GetRequest(ctx, r.ID)
			if *got.Decision != "deny" || *got.DecidedBy != "operator:b" || got.Version != 2 {
				t.Fatalf("stored %s by %s v%d", *got.Decision, *got.DecidedBy, got.Version)
			}
			if trail := actions(t, b, r.ID); !equal(trail, []string{"create/api", "decide/api"}) {
				t.Fatalf("trail %v", trail)
			}
			if models.OpenCached(a, r.ID) {
				t.Error("a guess that did not stand is kept")
			}
		})

		t.Run("edited elsewhere: a decision on the new version is taken, on the new record", func(t *testing.T) {
			r := file(t, a, p, models.NewRequest{Unsealed: true})
			const now = "now it deletes the branch"
			if _, err := b.PatchRequest(ctx, r.ID, p, models.Patch{Summary: ptr(now)}); err != nil {
				t.Fatal(err)
			}
			got, err := a.Decide(ctx, r.ID, models.Decision{Version: 2, Option: "once", By: "operator:a", Via: "api"})
			if err != nil {
				t.Fatalf("decision on the version the operator saw: %v", err)
			}
			if got.Version != 3 || got.Summary != now || *got.Decision != "once" {
				t.Fatalf("decided v%d %q %s", got.Version, got.Summary, *got.Decision)
			}
			if stored, _ := b.GetRequest(ctx, r.ID); stored.Summary != now || stored.Status != models.StatusResolved || *stored.DecidedDigest != stored.ActionDigest() {
				t.Fatalf("stored %q %s", stored.Summary, stored.Status)
			}
		})

		t.Run("edited elsewhere: a decision on the old version is a conflict", func(t *testing.T) {
			r := file(t, a, p, models.NewRequest{Unsealed: true})
			if _, err := b.PatchRequest(ctx, r.ID, p, models.Patch{Summary: ptr("changed")}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:a", Via: "api"}); models.ErrorCode(err) != models.ECodeVersionConflict {
				t.Fatalf("decision on the unedited version: %v", err)
			}
			if got, _ := b.GetRequest(ctx, r.ID); got.Status != models.StatusOpen || got.Version != 2 {
				t.Fatalf("stored %s v%d", got.Status, got.Version)
			}
		})
	})
}
