package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
)

// TestDecideOnAGuess: a store decides on the record it committed last without
// reading it back, and another store changing the request in between never
// makes that guess decide wrongly or refuse what the database would take.
func TestDecideOnAGuess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		a, b := replicas(t, dialect)
		p := agent(t, a, "a1")

		t.Run("a filing is guessed at, a decision drops it", func(t *testing.T) {
			r := file(t, a, p, models.NewRequest{})
			if !store.OpenCached(a, r.ID) {
				t.Fatal("the filing's record is not kept")
			}
			if _, err := a.Decide(ctx, r.ID, models.Decision{Version: 1, Option: "once", By: "operator:a", Via: "api"}); err != nil {
				t.Fatal(err)
			}
			if store.OpenCached(a, r.ID) {
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
			if store.OpenCached(a, r.ID) {
				t.Error("a guess that did not stand is kept")
			}
		})

		t.Run("edited elsewhere: a decision on the new version is taken, on the new record", func(t *testing.T) {
			r := file(t, a, p, models.NewRequest{Unsealed: true})
			const now = "now it deletes the branch"
			if _, err := b.PatchRequest(ctx, r.ID, p, store.Patch{Summary: ptr(now)}); err != nil {
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
			if _, err := b.PatchRequest(ctx, r.ID, p, store.Patch{Summary: ptr("changed")}); err != nil {
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

// TestOpenCacheBounds: the cache holds at most 1,024 records and about 4 MiB
// of their text, however many or large the filings, and its count of bytes
// follows what it holds through replacements and removals.
func TestOpenCacheBounds(t *testing.T) {
	open := func(id string, version int, detail int) models.Change {
		r := &models.Request{ID: id, Status: models.StatusOpen, Version: version, Title: "t", Detail: strings.Repeat("d", detail)}
		return models.Change{RequestID: id, Version: version, Status: r.Status, Record: r}
	}
	t.Run("count", func(t *testing.T) {
		c := store.NewOpenCache()
		for i := range 3000 {
			c.Committed([]models.Change{open(fmt.Sprint("req_", i), 1, 0)})
		}
		if n, _ := c.Size(); n > 1024 || n == 0 {
			t.Fatalf("%d records held", n)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		c := store.NewOpenCache()
		for i := range 300 {
			c.Committed([]models.Change{open(fmt.Sprint("req_", i), 1, 32<<10)})
		}
		n, b := c.Size()
		if b > 4<<20 || n == 0 || b != n*(32<<10+1) {
			t.Fatalf("%d records, %d bytes counted", n, b)
		}
	})
	t.Run("replaced and removed", func(t *testing.T) {
		c := store.NewOpenCache()
		c.Committed([]models.Change{open("req_a", 1, 100), open("req_b", 1, 10)})
		c.Committed([]models.Change{open("req_a", 2, 50)})
		c.Committed([]models.Change{open("req_a", 1, 70)}) // older: ignored
		if n, b := c.Size(); n != 2 || b != 51+11 {
			t.Fatalf("after a newer version: %d records, %d bytes", n, b)
		}
		done := open("req_b", 2, 10)
		done.Record.Status, done.Status = models.StatusResolved, models.StatusResolved
		c.Committed([]models.Change{done})
		if n, b := c.Size(); n != 1 || b != 51 {
			t.Fatalf("after a decision: %d records, %d bytes", n, b)
		}
	})
}
