package store_test

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/store"
	"github.com/gatehousehq/gatehouse/models/store/storetest"
	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// TestRequestColumns: the hand-scanned read names every column GORM maps for
// a request, once each.
func TestRequestColumns(t *testing.T) {
	sch, err := schema.Parse(&models.Request{}, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	cols := strings.Split(store.RequestColumns, ", ")
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c] {
			t.Errorf("column %s is listed twice", c)
		}
		seen[c] = true
	}
	for _, f := range sch.Fields {
		if f.DBName != "" && !seen[f.DBName] {
			t.Errorf("column %s (field %s) is not read by LoadRequest", f.DBName, f.Name)
		}
		delete(seen, f.DBName)
	}
	for c := range seen {
		t.Errorf("column %s is read but is no field of Request", c)
	}
}

// TestLoadRequest: the hand scan reads what GORM reads, with every field set
// and with every nullable one NULL, on both databases.
func TestLoadRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		db := storetest.DB(t, dialect)
		full, bare := fullRequest(t, "req_full"), bareRequest("req_bare")
		for _, r := range []*models.Request{full, bare} {
			t.Run(r.ID, func(t *testing.T) {
				if err := db.Create(r).Error; err != nil {
					t.Fatal(err)
				}
				var want models.Request
				if err := db.Where("id = ?", r.ID).Take(&want).Error; err != nil {
					t.Fatal(err)
				}
				got, err := store.LoadRequest(db, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("hand scan differs from GORM's:\n got %+v\nwant %+v", *got, want)
				}
			})
		}
		t.Run("missing", func(t *testing.T) {
			if _, err := store.LoadRequest(db, "req_none"); !errors.Is(err, gorm.ErrRecordNotFound) {
				t.Errorf("err = %v, want gorm.ErrRecordNotFound", err)
			}
		})
	})
}

// fullRequest is a request with every field set (the test fails when a field
// is left zero, so a new one must be given a value, and so is checked).
func fullRequest(t *testing.T, id string) *models.Request {
	t.Helper()
	at := time.Date(2026, 12, 1, 10, 11, 12, 345678000, time.UTC)
	s := func(v string) *string { return &v }
	tm := func(d time.Duration) *time.Time { v := at.Add(d); return &v }
	full := models.Request{
		ID: id, Kind: models.KindApproval, Status: models.StatusResolved, Version: 3, Title: "t", Summary: "s",
		Detail: "d", Risk: "high", Tool: "Bash", Command: "git push", AllowAnswer: true, DefaultOption: "no",
		Options:  []models.Option{{ID: "ok", Label: "OK", Effect: "allow", Saves: "x"}, {ID: "no", Label: "No", Effect: "deny"}},
		Decision: s("ok"), Answer: s("a"), Note: s("n"), Source: "session", SourceRef: map[string]string{"session": "s1"},
		RuntimeID: s("rt_1"), PendingID: s("p1"), OwnerID: "tok_1", IdempotencyKey: s("k1"), CreatedBy: "agent:x",
		CreatedAt: at, UpdatedAt: at.Add(time.Second), ExpiresAt: at.Add(time.Hour), ResolvedAt: tm(2 * time.Second),
		DecidedBy: s("operator:o"), DecidedVia: s("api"), ActuationState: "pending", Attempts: 2, HoldRule: s("r"),
		HoldUntil: tm(time.Minute), HoldThen: s("ok"), HoldEffect: s("allow"), Sealed: true, EditedAt: tm(3 * time.Second),
		DecidedDigest: s("d1"), Approvers: &models.Approvers{Groups: []string{"g"}, Required: 2, Note: models.NoteRequired},
		Votes:    models.Votes{{By: "operator:o", Decision: "ok", Note: s("v"), At: at}},
		FiledFor: "o", FilingDigest: "f1", GrantID: ptr("rem_1"),
		EscalationStep: 1, EscalateAt: &at, Escalations: []models.Escalated{{Step: 1, At: at, Groups: []string{"oncall"}, Why: models.EscalatedDue}},
		Review: &models.Review{Status: models.ReviewDone, Risk: "high", Authorised: "low", Rationale: "r", Model: "openai:m", Digest: "d", TokensIn: 2, TokensOut: 1, At: at},
	}
	v := reflect.ValueOf(full)
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Fatalf("field %s is zero in the test's record: give it a value, so its column is checked", v.Type().Field(i).Name)
		}
	}
	return &full
}

// bareRequest is a request with only the NOT NULL columns set: every nullable
// one NULL, every defaulted one left to its default.
func bareRequest(id string) *models.Request {
	at := time.Date(2026, 12, 1, 10, 11, 12, 345678000, time.UTC)
	return &models.Request{ID: id, Kind: models.KindQuestion, Status: models.StatusOpen, Version: 1, Title: "t",
		OwnerID: "tok_1", CreatedBy: "agent:x", CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour)}
}

// TestInsertRequest: the hand INSERT stores the row GORM's Create stores, with
// every field set and with every nullable one NULL, on both databases.
func TestInsertRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, dialect string) {
		db := storetest.DB(t, dialect)
		for _, c := range []struct {
			name string
			make func(id string) *models.Request
		}{{"full", func(id string) *models.Request { return fullRequest(t, id) }}, {"bare", bareRequest}} {
			t.Run(c.name, func(t *testing.T) {
				// Another owner, so the two rows' pending ids and keys do not collide.
				byGORM, byHand := c.make("req_gorm_"+c.name), c.make("req_hand_"+c.name)
				byHand.OwnerID = "tok_hand"
				if err := db.Create(byGORM).Error; err != nil {
					t.Fatal(err)
				}
				if err := store.InsertRequest(db, byHand); err != nil {
					t.Fatal(err)
				}
				row := func(id string) map[string]any {
					m := map[string]any{}
					if err := db.Table("requests").Where("id = ?", id).Take(&m).Error; err != nil {
						t.Fatal(err)
					}
					delete(m, "id")
					delete(m, "owner_id")
					return m
				}
				if got, want := row(byHand.ID), row(byGORM.ID); !reflect.DeepEqual(got, want) {
					t.Errorf("hand INSERT stored\n %v\nGORM stored\n %v", got, want)
				}
				byHand.ID, byHand.OwnerID = byGORM.ID, byGORM.OwnerID
				if !reflect.DeepEqual(byHand, byGORM) {
					t.Errorf("after the insert the record is\n %+v\nafter GORM's\n %+v", byHand, byGORM)
				}
			})
		}
		t.Run("duplicate_id", func(t *testing.T) {
			if err := store.InsertRequest(db, bareRequest("req_hand_bare")); !errors.Is(err, gorm.ErrDuplicatedKey) {
				t.Errorf("err = %v, want gorm.ErrDuplicatedKey", err)
			}
		})
	})
}
