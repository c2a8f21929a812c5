package models_test

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
	"github.com/gatehousehq/gatehouse/models/modelstest"
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
	cols := strings.Split(models.RequestColumns, ", ")
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
	modelstest.Each(t, func(t *testing.T, dialect string) {
		db := modelstest.DB(t, dialect)
		at := time.Date(2026, 12, 1, 10, 11, 12, 345678000, time.UTC)
		s := func(v string) *string { return &v }
		tm := func(d time.Duration) *time.Time { v := at.Add(d); return &v }
		full := models.Request{
			ID: "req_full", Kind: models.KindApproval, Status: models.StatusResolved, Version: 3, Title: "t", Summary: "s",
			Detail: "d", Risk: "high", Tool: "Bash", Command: "git push", AllowAnswer: true, DefaultOption: "no",
			Options:  []models.Option{{ID: "ok", Label: "OK", Effect: "allow", Saves: "x"}, {ID: "no", Label: "No", Effect: "deny"}},
			Decision: s("ok"), Answer: s("a"), Note: s("n"), Source: "session", SourceRef: map[string]string{"session": "s1"},
			RuntimeID: s("rt_1"), PendingID: s("p1"), OwnerID: "tok_1", IdempotencyKey: s("k1"), CreatedBy: "agent:x",
			CreatedAt: at, UpdatedAt: at.Add(time.Second), ExpiresAt: at.Add(time.Hour), ResolvedAt: tm(2 * time.Second),
			DecidedBy: s("operator:o"), DecidedVia: s("api"), ActuationState: "pending", Attempts: 2, HoldRule: s("r"),
			HoldUntil: tm(time.Minute), HoldThen: s("ok"), HoldEffect: s("allow"), Sealed: true, EditedAt: tm(3 * time.Second),
			DecidedDigest: s("d1"), Approvers: &models.Approvers{Groups: []string{"g"}, Required: 2, Note: models.NoteRequired},
			Votes:    models.Votes{{By: "operator:o", Decision: "ok", Note: s("v"), At: at}},
			FiledFor: "o",
		}
		v := reflect.ValueOf(full)
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).IsZero() {
				t.Fatalf("field %s is zero in the test's record: give it a value, so its column is checked", v.Type().Field(i).Name)
			}
		}
		bare := models.Request{ID: "req_bare", Kind: models.KindQuestion, Status: models.StatusOpen, Version: 1, Title: "t",
			OwnerID: "tok_1", CreatedBy: "agent:x", CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(time.Hour), ActuationState: "none"}
		for _, r := range []*models.Request{&full, &bare} {
			t.Run(r.ID, func(t *testing.T) {
				if err := db.Create(r).Error; err != nil {
					t.Fatal(err)
				}
				var want models.Request
				if err := db.Where("id = ?", r.ID).Take(&want).Error; err != nil {
					t.Fatal(err)
				}
				got, err := models.LoadRequest(db, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("hand scan differs from GORM's:\n got %+v\nwant %+v", *got, want)
				}
			})
		}
		t.Run("missing", func(t *testing.T) {
			if _, err := models.LoadRequest(db, "req_none"); !errors.Is(err, gorm.ErrRecordNotFound) {
				t.Errorf("err = %v, want gorm.ErrRecordNotFound", err)
			}
		})
	})
}
