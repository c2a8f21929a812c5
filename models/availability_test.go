package models_test

import (
	"testing"
	"time"

	"github.com/gatehousehq/gatehouse/models"
)

// TestQuietHours: 22:00–07:00 in Europe/Berlin crosses midnight and follows
// the zone's daylight saving (UTC+1 in winter, UTC+2 in summer).
func TestQuietHours(t *testing.T) {
	a := &models.Availability{Operator: "alice", QuietHours: models.QuietHours{QuietStart: "22:00", QuietEnd: "07:00", QuietTZ: "Europe/Berlin"}}
	for _, c := range []struct {
		utc   string
		quiet bool
	}{
		{"2026-01-15T20:59:00Z", false}, // 21:59 in Berlin
		{"2026-01-15T21:00:00Z", true},  // 22:00
		{"2026-01-15T23:30:00Z", true},  // 00:30, past midnight
		{"2026-01-16T05:59:00Z", true},  // 06:59
		{"2026-01-16T06:00:00Z", false}, // 07:00: over
		{"2026-07-15T20:00:00Z", true},  // 22:00 in summer time
		{"2026-07-15T21:00:00Z", true},  // 23:00
		{"2026-07-16T04:59:00Z", true},  // 06:59
		{"2026-07-16T05:00:00Z", false}, // 07:00
		{"2026-07-15T12:00:00Z", false}, // 14:00
	} {
		at, _ := time.Parse(time.RFC3339, c.utc)
		if got := a.QuietAt(at); got != c.quiet {
			t.Errorf("at %s: quiet %v, want %v", c.utc, got, c.quiet)
		}
	}
	t.Run("a span within one day", func(t *testing.T) {
		d := &models.Availability{QuietHours: models.QuietHours{QuietStart: "12:00", QuietEnd: "13:00", QuietTZ: "America/New_York"}}
		noon, _ := time.Parse(time.RFC3339, "2026-01-15T17:30:00Z") // 12:30 in New York
		if !d.QuietAt(noon) || d.QuietAt(noon.Add(time.Hour)) {
			t.Fatal("12:00–13:00 New York")
		}
	})
	t.Run("validation", func(t *testing.T) {
		for _, q := range []models.QuietHours{
			{QuietStart: "22:00", QuietEnd: "22:00", QuietTZ: "UTC"},
			{QuietStart: "24:00", QuietEnd: "07:00", QuietTZ: "UTC"},
			{QuietStart: "9:00", QuietEnd: "17:00", QuietTZ: "UTC"},
			{QuietStart: "22:00", QuietEnd: "07:00", QuietTZ: "Mars/Olympus"},
			{QuietStart: "22:00", QuietEnd: "07:00", QuietTZ: "Local"},
			{QuietStart: "22:00", QuietEnd: "07:00"},
		} {
			if q.Validate() == nil {
				t.Errorf("%+v accepted", q)
			}
		}
		if err := (models.QuietHours{QuietStart: "22:00", QuietEnd: "07:00", QuietTZ: "Europe/Berlin"}).Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("away until", func(t *testing.T) {
		now := time.Now()
		until := now.Add(time.Hour)
		a := &models.Availability{Away: true, AwayUntil: &until}
		if !a.AwayAt(now) || a.AwayAt(until) {
			t.Fatal("away until an hour from now")
		}
	})
}
